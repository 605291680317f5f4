/**
 * A TLS 1.3 ClientHello record for a server name (RFC 8446 §4.1.2), as a probe sends it: enough
 * for a server to pick its certificate by the name and answer (cipher suite
 * TLS_AES_128_GCM_SHA256, group x25519 with a random key share, signature scheme
 * ecdsa_secp256r1_sha256 and rsa_pss_rsae_sha256). The probe never finishes the handshake.
 *
 * @module
 */

function u16(n: number): number[] {
  return [(n >> 8) & 0xff, n & 0xff];
}

function u24(n: number): number[] {
  return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

function extension(type: number, body: number[]): number[] {
  return [...u16(type), ...u16(body.length), ...body];
}

/**
 * The ClientHello record; `serverName` "" sends no server name extension.
 *
 * @example
 * ```ts
 * import { clientHello } from "./client_hello.ts";
 * clientHello("example.com")[0]; // 0x16, a handshake record
 * ```
 */
export function clientHello(serverName: string): Uint8Array {
  const random = crypto.getRandomValues(new Uint8Array(32));
  const share = crypto.getRandomValues(new Uint8Array(32));
  const exts: number[] = [];
  if (serverName) {
    const name = [...new TextEncoder().encode(serverName)];
    const entry = [0, ...u16(name.length), ...name]; // host_name
    exts.push(...extension(0x0000, [...u16(entry.length), ...entry]));
  }
  exts.push(
    ...extension(0x002b, [2, 0x03, 0x04]), // supported_versions: TLS 1.3
    ...extension(0x000a, [...u16(2), 0x00, 0x1d]), // supported_groups: x25519
    ...extension(0x000d, [...u16(4), 0x04, 0x03, 0x08, 0x04]), // signature_algorithms
    ...extension(0x0033, [...u16(36), 0x00, 0x1d, ...u16(32), ...share]), // key_share
  );
  const body = [
    0x03,
    0x03, // legacy_version
    ...random,
    0, // legacy_session_id
    ...u16(2),
    0x13,
    0x01, // cipher_suites
    1,
    0, // legacy_compression_methods: null
    ...u16(exts.length),
    ...exts,
  ];
  const handshake = [0x01, ...u24(body.length), ...body];
  return new Uint8Array([0x16, 0x03, 0x01, ...u16(handshake.length), ...handshake]);
}
