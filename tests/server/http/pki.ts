/**
 * Test PKI: a CA and leaf certificates signed by it, generated at test time with
 * @peculiar/x509 (for HTTPS listeners and TLS upstreams in the http tests).
 */
// @peculiar/x509 (through tsyringe) wants the reflect-metadata API; it only reads
// constructor parameter types, so a minimal store is enough.
const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== "function") {
  const store = new WeakMap<object, Map<unknown, unknown>>();
  const map = (t: object) => {
    let m = store.get(t);
    if (!m) store.set(t, m = new Map());
    return m;
  };
  R.defineMetadata = (k: unknown, v: unknown, t: object) => void map(t).set(k, v);
  R.getOwnMetadata = (k: unknown, t: object) => store.get(t)?.get(k);
  R.getMetadata = (k: unknown, t: object) => store.get(t)?.get(k);
  R.hasMetadata = (k: unknown, t: object) => store.get(t)?.has(k) ?? false;
  R.metadata = (k: unknown, v: unknown) => (t: object) => void map(t).set(k, v);
}
const x509 = await import("@peculiar/x509");
x509.cryptoProvider.set(crypto);

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", key));
  const b64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n");
  return `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`;
}

export interface Pki {
  caPem: string;
  leafs: Record<string, { cert: string; key: string }>;
}

/** A CA and leaf certificates signed by it, one per name list. */
export async function makePki(
  leafNames: Record<string, { dns: string[]; ip?: string[] }>,
): Promise<Pki> {
  const caKeys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=Gatehouse Test CA",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
    ],
  });
  const leafs: Pki["leafs"] = {};
  let serial = 2;
  for (const [id, names] of Object.entries(leafNames)) {
    const keys = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]) as CryptoKeyPair;
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: `0${serial++}`,
      subject: `CN=${names.dns[0]}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          ...names.dns.map((value) => ({ type: "dns" as const, value })),
          ...(names.ip ?? []).map((value) => ({ type: "ip" as const, value })),
        ]),
      ],
    });
    leafs[id] = { cert: leaf.toString("pem") + "\n", key: await pkcs8Pem(keys.privateKey) };
  }
  return { caPem: ca.toString("pem") + "\n", leafs };
}
