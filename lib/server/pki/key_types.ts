/**
 * Key types of managed certificates (an automation policy's `key_type`, Caddy's names):
 * `p256` (ECDSA P-256, the default), `p384` (ECDSA P-384), `ed25519`, `rsa2048`, `rsa4096`.
 * Both listener engines serve all five (rustls for `deno`, OpenSSL for `node`); note that
 * browsers do not accept Ed25519 server certificates and public CAs such as Let's Encrypt do
 * not issue them (the CA's refusal is reported as the obtain error). Keys are stored in PEM
 * as certmagic writes them readable: `EC PRIVATE KEY` (SEC 1) for ECDSA, `PRIVATE KEY`
 * (PKCS #8) for RSA and Ed25519. CA keys of the `pki` app stay ECDSA P-256.
 *
 * @module
 */
import { type KeyPair, pkcs8ToSec1 } from "./x509.ts";
import { pemEncode } from "./der.ts";
import { ConfigError } from "../config/error.ts";

/** A key type of a managed certificate. */
export type KeyType = "p256" | "p384" | "ed25519" | "rsa2048" | "rsa4096";

/** Every key type, the default first. */
export const KEY_TYPES: readonly KeyType[] = ["p256", "p384", "ed25519", "rsa2048", "rsa4096"];

const GENERATE: Record<KeyType, EcKeyGenParams | RsaHashedKeyGenParams | Algorithm> = {
  p256: { name: "ECDSA", namedCurve: "P-256" } as EcKeyGenParams,
  p384: { name: "ECDSA", namedCurve: "P-384" } as EcKeyGenParams,
  ed25519: { name: "Ed25519" },
  rsa2048: {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  } as RsaHashedKeyGenParams,
  rsa4096: {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 4096,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  } as RsaHashedKeyGenParams,
};

/**
 * Decodes a `key_type` value: empty or absent is `p256`; anything else not listed throws
 * with the list.
 *
 * @example
 * ```ts
 * import { parseKeyType } from "./key_types.ts";
 * parseKeyType("rsa2048", "key_type"); // "rsa2048"
 * parseKeyType(undefined, "key_type"); // "p256"
 * ```
 */
export function parseKeyType(raw: unknown, where: string): KeyType {
  if (raw === undefined || raw === null || raw === "") return "p256";
  if (typeof raw === "string" && (KEY_TYPES as readonly string[]).includes(raw)) {
    return raw as KeyType;
  }
  throw new ConfigError(
    "invalid_config",
    `${where}: unknown key type ${JSON.stringify(raw)}; use one of ${KEY_TYPES.join(", ")}`,
    { path: where },
  );
}

/**
 * A new key pair of `type` with its private key in PEM.
 *
 * @example
 * ```ts
 * import { generateKeyOfType } from "./key_types.ts";
 * (await generateKeyOfType("ed25519")).pem.startsWith("-----BEGIN PRIVATE KEY-----"); // true
 * ```
 */
export async function generateKeyOfType(type: KeyType): Promise<KeyPair> {
  const keys = await crypto.subtle.generateKey(GENERATE[type], true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const pem = type === "p256" || type === "p384"
    ? pemEncode("EC PRIVATE KEY", pkcs8ToSec1(pkcs8))
    : pemEncode("PRIVATE KEY", pkcs8);
  return { keys, pem };
}

/** The signature algorithm a key signs with (SHA-384 for P-384, SHA-256 otherwise). */
export function signingAlgorithmOf(
  key: CryptoKey,
): Algorithm | EcdsaParams | RsaHashedImportParams {
  const alg = key.algorithm as Partial<EcKeyAlgorithm & RsaHashedKeyAlgorithm>;
  if (alg.name === "ECDSA") {
    return { name: "ECDSA", hash: alg.namedCurve === "P-384" ? "SHA-384" : "SHA-256" };
  }
  if (alg.name === "RSASSA-PKCS1-v1_5") return { name: alg.name, hash: "SHA-256" };
  return { name: alg.name ?? "ECDSA" };
}

/** The key type of a public or private key (for logs and tests). */
export function keyTypeOf(key: CryptoKey): KeyType {
  const alg = key.algorithm as Partial<EcKeyAlgorithm & RsaHashedKeyAlgorithm>;
  if (alg.name === "Ed25519") return "ed25519";
  if (alg.name === "ECDSA") return alg.namedCurve === "P-384" ? "p384" : "p256";
  return alg.modulusLength === 4096 ? "rsa4096" : "rsa2048";
}
