/**
 * The system's OpenSSL (libssl 3) through FFI, for the one thing the upstream client cannot do
 * with Deno's TLS (rustls): let a TLS 1.2 upstream renegotiate (`tls.renegotiation` `once` or
 * `freely`, Go's `RenegotiateOnceAsClient` / `RenegotiateFreelyAsClient`). Only the calls the
 * TLS client of `openssl_conn.ts` makes are bound; the library opens on first use and needs
 * the FFI permission.
 *
 * @module
 */

const SYMBOLS = {
  TLS_client_method: { parameters: [], result: "pointer" },
  SSL_CTX_new: { parameters: ["pointer"], result: "pointer" },
  SSL_CTX_free: { parameters: ["pointer"], result: "void" },
  SSL_CTX_set_verify: { parameters: ["pointer", "i32", "pointer"], result: "void" },
  SSL_CTX_set_default_verify_paths: { parameters: ["pointer"], result: "i32" },
  SSL_CTX_get_cert_store: { parameters: ["pointer"], result: "pointer" },
  SSL_CTX_ctrl: { parameters: ["pointer", "i32", "i64", "pointer"], result: "i64" },
  SSL_new: { parameters: ["pointer"], result: "pointer" },
  SSL_free: { parameters: ["pointer"], result: "void" },
  SSL_set_bio: { parameters: ["pointer", "pointer", "pointer"], result: "void" },
  SSL_set_connect_state: { parameters: ["pointer"], result: "void" },
  SSL_do_handshake: { parameters: ["pointer"], result: "i32" },
  SSL_read: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  SSL_write: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  SSL_get_error: { parameters: ["pointer", "i32"], result: "i32" },
  SSL_ctrl: { parameters: ["pointer", "i32", "i64", "buffer"], result: "i64" },
  SSL_set_options: { parameters: ["pointer", "u64"], result: "u64" },
  SSL_set1_host: { parameters: ["pointer", "buffer"], result: "i32" },
  SSL_get0_param: { parameters: ["pointer"], result: "pointer" },
  SSL_set_alpn_protos: { parameters: ["pointer", "buffer", "u32"], result: "i32" },
  SSL_get0_alpn_selected: { parameters: ["pointer", "buffer", "buffer"], result: "void" },
  SSL_get_verify_result: { parameters: ["pointer"], result: "i64" },
  SSL_shutdown: { parameters: ["pointer"], result: "i32" },
} as const;

const CRYPTO_SYMBOLS = {
  BIO_s_mem: { parameters: [], result: "pointer" },
  BIO_new: { parameters: ["pointer"], result: "pointer" },
  BIO_free: { parameters: ["pointer"], result: "i32" },
  BIO_read: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  BIO_write: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  BIO_ctrl: { parameters: ["pointer", "i32", "i64", "pointer"], result: "i64" },
  BIO_new_mem_buf: { parameters: ["buffer", "i32"], result: "pointer" },
  PEM_read_bio_X509: {
    parameters: ["pointer", "pointer", "pointer", "pointer"],
    result: "pointer",
  },
  X509_STORE_add_cert: { parameters: ["pointer", "pointer"], result: "i32" },
  X509_free: { parameters: ["pointer"], result: "void" },
  X509_verify_cert_error_string: { parameters: ["i64"], result: "pointer" },
  X509_VERIFY_PARAM_set1_ip_asc: { parameters: ["pointer", "buffer"], result: "i32" },
  ERR_get_error: { parameters: [], result: "u64" },
  ERR_error_string_n: { parameters: ["u64", "buffer", "usize"], result: "void" },
  ERR_clear_error: { parameters: [], result: "void" },
} as const;

/** libssl's and libcrypto's bound calls. */
export type Ssl = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
/** libcrypto's bound calls. */
export type Crypto = Deno.DynamicLibrary<typeof CRYPTO_SYMBOLS>["symbols"];

/** `SSL_get_error` results. */
export const SSL_ERROR_WANT_READ = 2;
/** The peer sent close_notify. */
export const SSL_ERROR_ZERO_RETURN = 6;
/** `SSL_VERIFY_PEER`. */
export const SSL_VERIFY_PEER = 1;
/** `SSL_OP_NO_RENEGOTIATION`: a HelloRequest is answered with a no_renegotiation alert. */
export const SSL_OP_NO_RENEGOTIATION = 1n << 30n;
/** `SSL_CTRL_SET_TLSEXT_HOSTNAME` (SNI). */
export const SSL_CTRL_SET_TLSEXT_HOSTNAME = 55;
/** `SSL_CTRL_GET_TOTAL_RENEGOTIATIONS`. */
export const SSL_CTRL_GET_TOTAL_RENEGOTIATIONS = 12;
/** `SSL_CTRL_SET_MIN_PROTO_VERSION`. */
export const SSL_CTRL_SET_MIN_PROTO_VERSION = 123;
/** `TLS1_2_VERSION`. */
export const TLS1_2_VERSION = 0x0303;

let loaded: { ssl: Ssl; crypto: Crypto } | undefined;
let failure: string | undefined;

function open<S extends Deno.ForeignLibraryInterface>(names: string[], symbols: S) {
  let last: unknown;
  for (const name of names) {
    try {
      return Deno.dlopen(name, symbols).symbols;
    } catch (e) {
      last = e;
    }
  }
  throw new Error(`${names[0]}: ${(last as Error)?.message ?? last}`);
}

/**
 * OpenSSL's calls, loading the libraries on first use; throws saying why they cannot be used.
 *
 * @example
 * ```ts ignore
 * const { ssl } = openssl();
 * const method = ssl.TLS_client_method();
 * ```
 */
export function openssl(): { ssl: Ssl; crypto: Crypto } {
  if (loaded) return loaded;
  const why = opensslUnavailable();
  if (why) throw new Error(why);
  return loaded!;
}

/**
 * Why OpenSSL cannot be used in this process (no FFI permission, no libssl 3), or null when
 * it can; the first call loads the libraries.
 *
 * @example
 * ```ts
 * import { opensslUnavailable } from "./openssl.ts";
 * opensslUnavailable(); // null on Linux with libssl3 and --allow-ffi
 * ```
 */
export function opensslUnavailable(): string | null {
  if (loaded) return null;
  if (failure) return failure;
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
    return "it needs OpenSSL through FFI: run with --allow-ffi (or -A)";
  }
  try {
    const suffix = Deno.build.os === "darwin" ? ["libssl.3.dylib"] : ["libssl.so.3"];
    const csuffix = Deno.build.os === "darwin" ? ["libcrypto.3.dylib"] : ["libcrypto.so.3"];
    loaded = { ssl: open(suffix, SYMBOLS), crypto: open(csuffix, CRYPTO_SYMBOLS) };
    return null;
  } catch (e) {
    failure = `it needs OpenSSL 3 (libssl.so.3), which could not be loaded: ${
      (e as Error).message
    }`;
    return failure;
  }
}

/** OpenSSL's queued errors as one line (and the queue emptied); `fallback` when there is none. */
export function opensslError(fallback: string): string {
  const { crypto } = openssl();
  const parts: string[] = [];
  const buf = new Uint8Array(256);
  for (let e = crypto.ERR_get_error(); e !== 0n; e = crypto.ERR_get_error()) {
    crypto.ERR_error_string_n(e, buf, BigInt(buf.length));
    parts.push(cString(buf));
  }
  return parts.length ? parts.join("; ") : fallback;
}

/** A NUL-terminated string in a buffer. */
export function cString(buf: Uint8Array): string {
  const end = buf.indexOf(0);
  return new TextDecoder().decode(end < 0 ? buf : buf.subarray(0, end));
}

/** A string as a NUL-terminated buffer. */
export function cBuffer(s: string): Uint8Array<ArrayBuffer> {
  const b = new TextEncoder().encode(s);
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
}
