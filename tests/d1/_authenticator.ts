/**
 * A software WebAuthn authenticator for the flow tests, written apart from the code under
 * test: Web Crypto keys (ES256, RS256, EdDSA), a small CBOR encoder, authenticator data and
 * client data as WebAuthn Level 3 lays them out, `none` and `packed` (self) attestation, and
 * the JSON a browser's `PublicKeyCredential.toJSON()` gives.
 */

const enc = new TextEncoder();

export type Alg = "ES256" | "RS256" | "EdDSA";

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

// CBOR (RFC 8949): unsigned and negative integers, byte and text strings, maps.
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;
function head(major: number, n: number): Uint8Array {
  if (n < 24) return Uint8Array.of((major << 5) | n);
  if (n < 256) return Uint8Array.of((major << 5) | 24, n);
  if (n < 65536) return Uint8Array.of((major << 5) | 25, n >> 8, n & 255);
  return Uint8Array.of((major << 5) | 26, n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255);
}
export function cbor(v: Cbor): Uint8Array<ArrayBuffer> {
  if (typeof v === "number") return concat(v >= 0 ? head(0, v) : head(1, -1 - v));
  if (typeof v === "string") {
    const b = enc.encode(v);
    return concat(head(3, b.length), b);
  }
  if (v instanceof Uint8Array) return concat(head(2, v.length), v);
  const parts: Uint8Array[] = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cbor(k), cbor(val));
  return concat(...parts);
}

/** Raw r||s (P-256) as the ASN.1 DER signature WebAuthn's ES256 carries. */
function derOf(raw: Uint8Array): Uint8Array<ArrayBuffer> {
  const int = (x: Uint8Array) => {
    let i = 0;
    while (i < x.length - 1 && x[i] === 0) i++;
    let v = x.slice(i);
    if (v[0] & 0x80) v = concat(Uint8Array.of(0), v);
    return concat(Uint8Array.of(0x02, v.length), v);
  };
  const body = concat(int(raw.slice(0, 32)), int(raw.slice(32)));
  return concat(Uint8Array.of(0x30, body.length), body);
}

const PARAMS = {
  ES256: {
    gen: { name: "ECDSA", namedCurve: "P-256" },
    sign: { name: "ECDSA", hash: "SHA-256" },
    cose: -7,
  },
  RS256: {
    gen: {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: Uint8Array.of(1, 0, 1),
      hash: "SHA-256",
    },
    sign: { name: "RSASSA-PKCS1-v1_5" },
    cose: -257,
  },
  EdDSA: { gen: { name: "Ed25519" }, sign: { name: "Ed25519" }, cose: -8 },
} as const;

/** One credential held by the authenticator. */
export interface Credential {
  id: Uint8Array<ArrayBuffer>;
  alg: Alg;
  keys: CryptoKeyPair;
  userHandle: string;
  rpId: string;
  counter: number;
}

async function coseKey(alg: Alg, key: CryptoKey): Promise<Uint8Array<ArrayBuffer>> {
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const b = (s?: string) =>
    Uint8Array.from(atob(s!.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
  if (alg === "ES256") {
    return cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, b(jwk.x)], [-3, b(jwk.y)]]));
  }
  if (alg === "RS256") {
    return cbor(new Map<Cbor, Cbor>([[1, 3], [3, -257], [-1, b(jwk.n)], [-2, b(jwk.e)]]));
  }
  return cbor(new Map<Cbor, Cbor>([[1, 1], [3, -8], [-1, 6], [-2, b(jwk.x)]]));
}

async function sign(
  c: Credential,
  data: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  const sig = new Uint8Array(await crypto.subtle.sign(PARAMS[c.alg].sign, c.keys.privateKey, data));
  return c.alg === "ES256" ? derOf(sig) : sig;
}

function flags(o: { uv: boolean; at?: boolean; backup?: boolean }): number {
  return 0x01 | (o.uv ? 0x04 : 0) | (o.backup ? 0x18 : 0) | (o.at ? 0x40 : 0);
}

function counterBytes(n: number): Uint8Array {
  return Uint8Array.of(n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255);
}

/** Options for a registration answer. */
export interface CreateOptions {
  alg?: Alg;
  attestation?: "none" | "packed";
  origin: string;
  /** The RP ID the authenticator hashes (default the options' rp.id). */
  rpId?: string;
  uv?: boolean;
  backup?: boolean;
  type?: string;
}

/** Answers `navigator.credentials.create(options)`: the credential and its JSON. */
export async function create(
  options: Record<string, unknown>,
  o: CreateOptions,
): Promise<{ credential: Credential; json: Record<string, unknown> }> {
  const alg = o.alg ?? "ES256";
  const rp = options.rp as { id: string };
  const user = options.user as { id: string };
  const rpId = o.rpId ?? rp.id;
  const keys = await crypto.subtle.generateKey(PARAMS[alg].gen, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const credential: Credential = {
    id: crypto.getRandomValues(new Uint8Array(32)),
    alg,
    keys,
    userHandle: user.id,
    rpId,
    counter: 0,
  };
  const clientData = enc.encode(JSON.stringify({
    type: o.type ?? "webauthn.create",
    challenge: options.challenge,
    origin: o.origin,
    crossOrigin: false,
  }));
  const authData = concat(
    await sha256(enc.encode(rpId)),
    Uint8Array.of(flags({ uv: o.uv ?? true, at: true, backup: o.backup })),
    counterBytes(0),
    new Uint8Array(16),
    Uint8Array.of(0, credential.id.length),
    credential.id,
    await coseKey(alg, keys.publicKey),
  );
  const attStmt = o.attestation === "packed"
    ? new Map<Cbor, Cbor>([
      ["alg", PARAMS[alg].cose],
      ["sig", await sign(credential, concat(authData, await sha256(clientData)))],
    ])
    : new Map<Cbor, Cbor>();
  const attestationObject = cbor(
    new Map<Cbor, Cbor>([["fmt", o.attestation ?? "none"], ["attStmt", attStmt], [
      "authData",
      authData,
    ]]),
  );
  return {
    credential,
    json: {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: "public-key",
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
      response: {
        clientDataJSON: b64url(clientData),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
    },
  };
}

/** Options for a sign-in answer. */
export interface GetOptions {
  origin: string;
  rpId?: string;
  uv?: boolean;
  /** The counter to report (default: the credential's, plus one). */
  counter?: number;
  /** The user handle to report (default: the credential's; null for none). */
  userHandle?: string | null;
}

/** Answers `navigator.credentials.get(options)` with `c`: the assertion's JSON. */
export async function get(
  options: Record<string, unknown>,
  c: Credential,
  o: GetOptions,
): Promise<Record<string, unknown>> {
  const counter = o.counter ?? c.counter + 1;
  c.counter = counter;
  const clientData = enc.encode(JSON.stringify({
    type: "webauthn.get",
    challenge: options.challenge,
    origin: o.origin,
    crossOrigin: false,
  }));
  const authData = concat(
    await sha256(enc.encode(o.rpId ?? c.rpId)),
    Uint8Array.of(flags({ uv: o.uv ?? true })),
    counterBytes(counter),
  );
  const signature = await sign(c, concat(authData, await sha256(clientData)));
  const handle = o.userHandle === undefined ? c.userHandle : o.userHandle;
  return {
    id: b64url(c.id),
    rawId: b64url(c.id),
    type: "public-key",
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(signature),
      ...(handle === null ? {} : { userHandle: handle }),
    },
  };
}

/** The base64url of a user id (what a site's user handle is, for a foreign handle). */
export function handleOf(text: string): string {
  return b64url(enc.encode(text));
}
