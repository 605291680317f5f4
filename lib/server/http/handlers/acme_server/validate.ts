/**
 * Challenge validation (RFC 8555 section 8, RFC 8737, RFC 8738): `http-01` fetches
 * `http://<name>/.well-known/acme-challenge/<token>` (port 80, redirects followed) and expects
 * the key authorization; `dns-01` looks up the TXT records of `_acme-challenge.<name>` (with
 * the configured `resolvers`) for the base64url SHA-256 of it; `tls-alpn-01` connects to port
 * 443 offering only `acme-tls/1` (with the TLS 1.3 probe of tls13_probe.ts) and expects a
 * certificate for the name alone with the critical acmeIdentifier extension holding that
 * digest. Each attempt is limited to 10 s.
 *
 * @module
 */
import { x509 } from "../../../pki/x509.ts";
import { probeTls13 } from "./tls13_probe.ts";
import { lookup, type NameServer } from "../reverse_proxy/upstream_sources/resolver.ts";
import type { Challenge, Identifier } from "./store.ts";

const TIMEOUT = 10_000;
const ACME_IDENTIFIER = "1.3.6.1.5.5.7.1.31";

function b64url(b: ArrayBuffer | Uint8Array): string {
  return btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** A failed validation: the ACME error type and what was wrong. */
export class ValidationError extends Error {
  /** `incorrectResponse`, `connection`, `dns`, `tls`, `unauthorized`. */
  readonly type: string;
  /** An error of `type`. */
  constructor(type: string, detail: string) {
    super(detail);
    this.type = type;
  }
}

async function http01(id: Identifier, token: string, keyAuth: string): Promise<void> {
  const host = id.type === "ip" && id.value.includes(":") ? `[${id.value}]` : id.value;
  const url = `http://${host}/.well-known/acme-challenge/${token}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT), redirect: "follow" });
  } catch (e) {
    throw new ValidationError("connection", `fetching ${url}: ${(e as Error).message}`);
  }
  const text = (await res.text()).slice(0, 65536);
  if (res.status !== 200) {
    throw new ValidationError("incorrectResponse", `${url} answered ${res.status}`);
  }
  if (text.trim() !== keyAuth) {
    throw new ValidationError("incorrectResponse", `${url}: the key authorization does not match`);
  }
}

async function dns01(id: Identifier, keyAuth: string, resolvers: NameServer[]): Promise<void> {
  const name = `_acme-challenge.${id.value.replace(/^\*\./, "")}`;
  const want = b64url(await sha256(keyAuth));
  let records: string[][];
  try {
    records = await lookup(name, "TXT", { servers: resolvers, timeoutMs: TIMEOUT });
  } catch (e) {
    throw new ValidationError("dns", `looking up TXT ${name}: ${(e as Error).message}`);
  }
  if (!records.some((r) => r.join("") === want)) {
    throw new ValidationError(
      "incorrectResponse",
      `no TXT record of ${name} holds the expected digest`,
    );
  }
}

function reverseName(ip: string): string {
  return ip.split(".").reverse().join(".") + ".in-addr.arpa";
}

async function tlsAlpn01(id: Identifier, keyAuth: string): Promise<void> {
  const serverName = id.type === "ip"
    ? (id.value.includes(":") ? "" : reverseName(id.value))
    : id.value;
  let probe;
  try {
    probe = await probeTls13(id.value, 443, serverName, "acme-tls/1", TIMEOUT);
  } catch (e) {
    throw new ValidationError("tls", `TLS with ${id.value}:443: ${(e as Error).message}`);
  }
  if (probe.alpn !== "acme-tls/1") {
    throw new ValidationError("tls", `${id.value}:443 did not negotiate acme-tls/1`);
  }
  const peer = probe.certificate;
  const lib = await x509();
  const cert = new lib.X509Certificate(peer as BufferSource);
  const san = cert.getExtension(lib.SubjectAlternativeNameExtension);
  const names = san?.names.items.map((n) => n.value.toLowerCase()) ?? [];
  if (names.length !== 1 || names[0] !== id.value.toLowerCase()) {
    throw new ValidationError("unauthorized", `the certificate is not for ${id.value} alone`);
  }
  const ext = cert.extensions.find((e) => e.type === ACME_IDENTIFIER);
  if (!ext || !ext.critical) {
    throw new ValidationError(
      "unauthorized",
      "the certificate has no critical acmeIdentifier extension",
    );
  }
  const want = await sha256(keyAuth);
  const got = new Uint8Array(ext.value);
  const ok = got.length === 34 && got[0] === 0x04 && got[1] === 0x20 &&
    want.every((b, i) => got[2 + i] === b);
  if (!ok) throw new ValidationError("unauthorized", "the acmeIdentifier does not match");
}

/** Validates one challenge; throws a ValidationError saying why it failed. */
export async function validateChallenge(
  ch: Challenge,
  id: Identifier,
  thumbprint: string,
  resolvers: NameServer[],
): Promise<void> {
  const keyAuth = `${ch.token}.${thumbprint}`;
  switch (ch.type) {
    case "http-01":
      return await http01(id, ch.token, keyAuth);
    case "dns-01":
      return await dns01(id, keyAuth, resolvers);
    case "tls-alpn-01":
      return await tlsAlpn01(id, keyAuth);
  }
}
