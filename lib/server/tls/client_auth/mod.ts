/**
 * TLS client authentication (`client_authentication` of a connection policy): decoding, and
 * the check a listener runs on a connection's client certificates. Modes as Caddy's:
 * `request` (ask, accept anything), `require` (a certificate must be sent, not verified),
 * `verify_if_given` (verified when sent), `require_and_verify` (sent and verified). The
 * default is `require_and_verify` when a trust pool or trusted leaves are given, else
 * `require`. Verification checks the chain against the trust pool (verify.ts), then every
 * leaf verifier (leaf.ts): with a leaf list alone, the certificate must be on the list.
 *
 * Only the `node` listener engine can ask clients for certificates (`Deno.serve` cannot):
 * servers whose policies authenticate clients run on it (see `engineFor`).
 *
 * @module
 */
import type * as X509 from "@peculiar/x509";
import type { ProvisionContext } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import { x509 } from "../../pki/x509.ts";
import { isTrustedLeaf, loadVerifier } from "./leaf.ts";
import { fromBase64, fromPemFiles, loadTrustPool, systemRoots } from "./trust_pool.ts";
import { verifyClientChain } from "./verify.ts";

type Raw = Record<string, unknown>;

/** How a policy treats client certificates. */
export type ClientAuthMode = "request" | "require" | "verify_if_given" | "require_and_verify";

const MODES: ClientAuthMode[] = ["request", "require", "verify_if_given", "require_and_verify"];

/** A provisioned `client_authentication`. */
export interface ClientAuth {
  /** The mode in force. */
  mode: ClientAuthMode;
  /**
   * Checks the certificates a client sent (leaf first, DER): null to accept the connection,
   * else why it is refused.
   */
  check(chain: Uint8Array[]): Promise<string | null>;
}

/** True when a `client_authentication` object configures anything (Caddy's `Active`). */
export function clientAuthActive(raw: unknown): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  return Object.keys(raw).some((k) => {
    const v = (raw as Raw)[k];
    return v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0);
  });
}

/**
 * Decodes and provisions a `client_authentication` object.
 *
 * @example
 * ```ts
 * import { provisionClientAuth } from "./mod.ts";
 * // const auth = await provisionClientAuth({ mode: "request" }, "policy", ctx);
 * // await auth.check([]) → null
 * ```
 */
export async function provisionClientAuth(
  raw: Raw,
  where: string,
  ctx: ProvisionContext,
): Promise<ClientAuth> {
  const d: Decoder = new Decoder(raw, where).fields([
    "ca",
    "trusted_ca_certs",
    "trusted_ca_certs_pem_files",
    "trusted_leaf_certs",
    "verifiers",
    "mode",
  ]);
  const legacyCA = raw.trusted_ca_certs !== undefined ||
    raw.trusted_ca_certs_pem_files !== undefined;
  if (raw.ca !== undefined && raw.ca !== null && legacyCA) {
    d.fail(
      `conflicting config for client authentication trust CA (give "ca" or the ` +
        `deprecated trusted_ca_certs fields, not both)`,
    );
  }
  // placeholders read client certificates synchronously: the parser is loaded now
  await x509();
  let pool: X509.X509Certificate[] | null = null;
  if (legacyCA) {
    const b64 = raw.trusted_ca_certs ?? [];
    const files = raw.trusted_ca_certs_pem_files ?? [];
    if (!Array.isArray(b64) || !Array.isArray(files)) d.fail("trusted CA fields must be arrays");
    pool = [
      ...await fromBase64(b64 as string[], d.at("trusted_ca_certs")),
      ...await fromPemFiles(files as string[], d.at("trusted_ca_certs_pem_files")),
    ];
  } else if (raw.ca !== undefined && raw.ca !== null) {
    pool = await loadTrustPool(Decoder.of(raw.ca, d.at("ca")), ctx);
  }
  const leafLists: X509.X509Certificate[][] = [];
  if (raw.trusted_leaf_certs !== undefined) {
    if (!Array.isArray(raw.trusted_leaf_certs)) d.failAt("trusted_leaf_certs", "must be an array");
    leafLists.push(
      await fromBase64(raw.trusted_leaf_certs as string[], d.at("trusted_leaf_certs")),
    );
  }
  const verifiers = raw.verifiers ?? [];
  if (!Array.isArray(verifiers)) d.failAt("verifiers", "must be an array");
  for (let i = 0; i < verifiers.length; i++) {
    leafLists.push(await loadVerifier(Decoder.of(verifiers[i], `${d.at("verifiers")}[${i}]`), ctx));
  }
  let mode: ClientAuthMode;
  if (raw.mode !== undefined && raw.mode !== "") {
    if (!MODES.includes(raw.mode as ClientAuthMode)) {
      d.failAt(
        "mode",
        `client auth mode not recognized: ${JSON.stringify(raw.mode)} (${MODES.join(", ")})`,
      );
    }
    mode = raw.mode as ClientAuthMode;
  } else {
    mode = pool !== null || raw.trusted_leaf_certs !== undefined ? "require_and_verify" : "require";
  }
  const verify = mode === "verify_if_given" || mode === "require_and_verify";
  const required = mode === "require" || mode === "require_and_verify";
  return {
    mode,
    async check(chain) {
      if (chain.length === 0) return required ? "a client certificate is required" : null;
      if (verify) {
        // no trust pool given: the system's roots, as Go verifies with nil ClientCAs
        pool ??= await systemRoots(where);
        const why = await verifyClientChain(chain, pool);
        if (why) return why;
      }
      // verifiers run on every certificate sent, in every mode (Caddy's VerifyConnection)
      for (const leaves of leafLists) {
        if (!isTrustedLeaf(chain[0], leaves)) return "client leaf certificate failed validation";
      }
      return null;
    },
  };
}
