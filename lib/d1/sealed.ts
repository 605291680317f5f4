/**
 * Secrets the flows must read back (a TOTP's shared key) are stored sealed: AES-256-GCM under
 * a key derived from `TOKEN_SECRET` with HKDF-SHA-256 for one purpose, with the row's owner as
 * additional data, so a copy of the database holds no usable key and a sealed value moved to
 * another user's row does not open. Rotation: the first secret seals, any opens.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import { b64urlDecode, b64urlEncode, utf8 } from "../auth/_encoding.ts";

const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(secret: string, purpose: string): Promise<CryptoKey> {
  const id = `${purpose}\u0000${secret}`;
  let key = keys.get(id);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, [
        "deriveKey",
      ]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: utf8(purpose) },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    if (keys.size >= 64) keys.delete(keys.keys().next().value!);
    keys.set(id, key);
  }
  return key;
}

const list = (s: Secrets) => (typeof s === "string" ? [s] : s);

/** `v1.<iv>.<ciphertext>` (base64url) of `plain` for `owner`. @internal */
export async function seal(
  secrets: Secrets,
  purpose: string,
  owner: string,
  plain: Uint8Array<ArrayBuffer>,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await keyFor(list(secrets)[0], purpose);
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8(owner) },
    key,
    plain,
  );
  return `v1.${b64urlEncode(iv)}.${b64urlEncode(new Uint8Array(ct))}`;
}

/** The plain bytes of a sealed value, or null when no secret opens it for `owner`. @internal */
export async function unseal(
  secrets: Secrets,
  purpose: string,
  owner: string,
  sealed: unknown,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (typeof sealed !== "string") return null;
  const [v, ivText, ctText] = sealed.split(".");
  const iv = b64urlDecode(ivText ?? "");
  const ct = b64urlDecode(ctText ?? "");
  if (v !== "v1" || !iv || iv.length !== 12 || !ct) return null;
  for (const s of list(secrets)) {
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv, additionalData: utf8(owner) },
        await keyFor(s, purpose),
        ct,
      );
      return new Uint8Array(plain);
    } catch {
      // another secret of the rotation list may open it
    }
  }
  return null;
}

/** Hex of SHA-256 of a high-entropy token (device tokens, ceremony ids). @internal */
export async function tokenDigest(token: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(token)));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Hex HMAC-SHA-256 of `text` under each secret (the first is the one to store). @internal */
export async function keyedDigests(
  secrets: Secrets,
  purpose: string,
  text: string,
): Promise<string[]> {
  const out: string[] = [];
  for (const s of list(secrets)) {
    const key = await crypto.subtle.importKey(
      "raw",
      utf8(s),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = new Uint8Array(
      await crypto.subtle.sign("HMAC", key, utf8(`${purpose}\u0000${text}`)),
    );
    out.push(Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join(""));
  }
  return out;
}

/** A random token of `bytes` bytes, base64url. @internal */
export function randomToken(bytes = 32): string {
  return b64urlEncode(crypto.getRandomValues(new Uint8Array(bytes)));
}
