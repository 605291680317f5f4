/**
 * Finalizing an order (RFC 8555 section 7.4): the CSR must be well signed and name exactly
 * the order's identifiers (subject common name and subjectAltNames); the certificate is
 * signed by the CA's intermediate (or root with `sign_with_root`) for `lifetime` (or the
 * order's notAfter when earlier), never past the issuer's own end. Also revocation by the
 * issuing account (recorded; the certificate is no longer served).
 *
 * @module
 */
import { makeLeaf, x509 } from "../../../pki/x509.ts";
import type { Ctx } from "./context.ts";
import { ACMEProblem } from "./problem.ts";
import { type Account, newId, type Order } from "./store.ts";

function b64urlDecode(s: string): Uint8Array {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(
    atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)),
    (c) => c.charCodeAt(0),
  );
}

/** Finalizes a ready order with the payload's CSR. */
export async function finalizeOrder(
  x: Ctx,
  o: Order,
  payload: Record<string, unknown>,
): Promise<void> {
  if (o.status !== "ready") {
    throw new ACMEProblem("orderNotReady", `the order is ${o.status}, not ready`);
  }
  if (typeof payload.csr !== "string") throw new ACMEProblem("malformed", "finalize needs a csr");
  const lib = await x509();
  let csr: InstanceType<typeof lib.Pkcs10CertificateRequest>;
  try {
    csr = new lib.Pkcs10CertificateRequest(b64urlDecode(payload.csr) as BufferSource);
  } catch (e) {
    throw new ACMEProblem("badCSR", `the CSR cannot be parsed: ${(e as Error).message}`);
  }
  if (!(await csr.verify())) throw new ACMEProblem("badCSR", "the CSR signature is not valid");
  const names = new Set<string>();
  const cn = csr.subjectName.getField("CN")[0];
  if (cn) names.add(String(cn).toLowerCase());
  const sanExt = csr.extensions.find((e) => e.type === "2.5.29.17");
  const san = sanExt ? new lib.SubjectAlternativeNameExtension(sanExt.rawData) : null;
  for (const n of san?.names.items ?? []) {
    if (n.type === "dns" || n.type === "ip") names.add(n.value.toLowerCase());
    else throw new ACMEProblem("badCSR", `the CSR names a ${n.type}, which cannot be ordered`);
  }
  const want = new Set(o.identifiers.map((i) => i.value.toLowerCase()));
  if (names.size !== want.size || [...names].some((n) => !want.has(n))) {
    throw new ACMEProblem(
      "badCSR",
      `the CSR names ${[...names].join(", ")}; the order is for ${[...want].join(", ")}`,
    );
  }
  o.status = "processing";
  await x.store.saveOrder(o);
  const ca = await x.pki.getCA(x.cfg.ca);
  const signer = ca.signer(x.cfg.signWithRoot);
  let lifetime = x.cfg.lifetimeMs;
  if (o.notAfter) {
    const until = Date.parse(o.notAfter) - Date.now();
    if (until > 0 && until < lifetime) lifetime = until;
  }
  const publicKey = await csr.publicKey.export();
  const leaf = await makeLeaf(
    o.identifiers.map((i) => i.value),
    publicKey,
    signer.pem,
    signer.key,
    lifetime,
  );
  const id = newId();
  await x.store.saveCertificate({ id, account: o.account, chain: leaf.pem + signer.chain });
  o.certificate = id;
  o.status = "valid";
  await x.store.saveOrder(o);
  x.log("certificate issued", { identifiers: [...want], not_after: leaf.notAfter.toISOString() });
}

/** Revokes a certificate the account was issued (`certificate`: base64url DER). */
export async function revokeCertificate(x: Ctx, account: Account, der: string): Promise<void> {
  if (!der) throw new ACMEProblem("malformed", "revoke-cert needs a certificate");
  const lib = await x509();
  let serial: string;
  try {
    serial = new lib.X509Certificate(b64urlDecode(der) as BufferSource).serialNumber;
  } catch {
    throw new ACMEProblem("malformed", "the certificate cannot be parsed");
  }
  for (const oid of account.orders) {
    const o = await x.store.order(oid);
    if (!o?.certificate) continue;
    const c = await x.store.certificate(o.certificate);
    if (!c) continue;
    const leaf = new lib.X509Certificate(
      c.chain.slice(0, c.chain.indexOf("-----END CERTIFICATE-----") + 25),
    );
    if (leaf.serialNumber !== serial) continue;
    if (c.revoked) throw new ACMEProblem("alreadyRevoked", "the certificate is already revoked");
    c.revoked = new Date().toISOString();
    await x.store.saveCertificate(c);
    return;
  }
  throw new ACMEProblem("unauthorized", "this account was not issued that certificate");
}
