/**
 * The JWS layer of the ACME server (RFC 8555 section 6.2): every POST is a flattened JWS
 * whose protected header carries `alg` (no MAC, no "none"), a fresh `nonce` (used once), the
 * request `url`, and either the account's `kid` or, for new accounts, its `jwk`. Signatures
 * are verified with `jose`. Nonces live in memory for an hour, at most 10000 at a time.
 *
 * @module
 */
import {
  calculateJwkThumbprint,
  type FlattenedJWSInput,
  flattenedVerify,
  importJWK,
  type JWK,
} from "jose";
import { ACMEProblem } from "./problem.ts";

/** Signature algorithms accepted (asymmetric only). */
export const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

const NONCE_TTL = 3_600_000;
const MAX_NONCES = 10_000;

/** Issues and checks anti-replay nonces. */
export class Nonces {
  #live = new Map<string, number>();

  /** A new nonce. */
  issue(): string {
    if (this.#live.size >= MAX_NONCES) {
      const now = Date.now();
      for (const [n, t] of this.#live) if (now - t > NONCE_TTL) this.#live.delete(n);
      while (this.#live.size >= MAX_NONCES) this.#live.delete(this.#live.keys().next().value!);
    }
    const b = crypto.getRandomValues(new Uint8Array(16));
    const n = btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(
      /=+$/,
      "",
    );
    this.#live.set(n, Date.now());
    return n;
  }

  /** Uses up a nonce: true when it was live. */
  consume(n: string): boolean {
    const t = this.#live.get(n);
    if (t === undefined) return false;
    this.#live.delete(n);
    return Date.now() - t <= NONCE_TTL;
  }
}

/** A verified request. */
export interface Verified {
  /** The protected header. */
  header: { alg: string; nonce: string; url: string; kid?: string; jwk?: JWK };
  /** The payload text ("" for POST-as-GET). */
  payload: string;
  /** The signing key (JWK) and its RFC 7638 thumbprint. */
  jwk: JWK;
  thumbprint: string;
}

/**
 * Verifies a request body. `accountKey(kid)` returns the JWK of the account a `kid` URL
 * names (or null); `useJwk` says whether this endpoint takes an embedded `jwk` (new-account,
 * revoke-cert by certificate key) instead of a `kid`.
 */
export async function verifyRequest(
  body: unknown,
  url: string,
  nonces: Nonces,
  accountKey: (kid: string) => Promise<JWK | null>,
  useJwk: boolean,
): Promise<Verified> {
  if (typeof body !== "object" || body === null) {
    throw new ACMEProblem("malformed", "the request body is not a JWS object");
  }
  const jws = body as FlattenedJWSInput;
  if (
    typeof jws.protected !== "string" || typeof jws.signature !== "string" ||
    typeof jws.payload !== "string"
  ) {
    throw new ACMEProblem(
      "malformed",
      "the JWS needs protected, payload and signature (flattened JSON)",
    );
  }
  let header: Verified["header"];
  try {
    const text = new TextDecoder().decode(
      Uint8Array.from(
        atob(jws.protected.replace(/-/g, "+").replace(/_/g, "/")),
        (c) => c.charCodeAt(0),
      ),
    );
    header = JSON.parse(text);
  } catch {
    throw new ACMEProblem("malformed", "the JWS protected header is not base64url JSON");
  }
  if (typeof header !== "object" || header === null) {
    throw new ACMEProblem("malformed", "bad protected header");
  }
  if (!ALGORITHMS.includes(header.alg)) {
    throw new ACMEProblem(
      "badSignatureAlgorithm",
      `signature algorithm ${JSON.stringify(header.alg)} is not accepted`,
    );
  }
  if (header.url !== url) {
    throw new ACMEProblem(
      "unauthorized",
      `the JWS url ${JSON.stringify(header.url)} is not the request URL`,
    );
  }
  if (typeof header.nonce !== "string" || !nonces.consume(header.nonce)) {
    throw new ACMEProblem("badNonce", "the nonce is missing, unknown or already used");
  }
  if ((header.jwk !== undefined) === (header.kid !== undefined)) {
    throw new ACMEProblem("malformed", "the JWS must carry exactly one of jwk and kid");
  }
  let jwk: JWK | null;
  if (useJwk) {
    if (!header.jwk) {
      throw new ACMEProblem("malformed", "this request must be signed with an embedded jwk");
    }
    jwk = header.jwk;
  } else {
    if (!header.kid) {
      throw new ACMEProblem("malformed", "this request must be signed by an account (kid)");
    }
    jwk = await accountKey(header.kid);
    if (!jwk) throw new ACMEProblem("accountDoesNotExist", "no account with that kid");
  }
  let payload: string;
  try {
    const key = await importJWK(jwk, header.alg);
    const r = await flattenedVerify(jws, key, { algorithms: ALGORITHMS });
    payload = new TextDecoder().decode(r.payload);
  } catch (e) {
    throw new ACMEProblem(
      "malformed",
      `JWS signature verification failed: ${(e as Error).message}`,
    );
  }
  return { header, payload, jwk, thumbprint: await calculateJwkThumbprint(jwk, "sha256") };
}
