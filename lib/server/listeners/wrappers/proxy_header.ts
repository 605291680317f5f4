/**
 * The PROXY protocol header (HAProxy's spec, versions 1 and 2), parsed from the first bytes of
 * a connection: a pure function from bytes to a verdict, so the listener can call it each time
 * more bytes arrive and never reads past the header.
 *
 * - v1: `PROXY TCP4|TCP6|UNKNOWN <src> <dst> <sport> <dport>\r\n`, at most 107 bytes.
 * - v2: the 12-byte signature, version/command, family/transport, a 16-bit length, then the
 *   addresses (IPv4 12 bytes, IPv6 36, unix 216) and TLVs (kept raw, not interpreted).
 *
 * @module
 */

/** The v2 signature. */
export const V2_SIGNATURE: Uint8Array = new Uint8Array([
  0x0d,
  0x0a,
  0x0d,
  0x0a,
  0x00,
  0x0d,
  0x0a,
  0x51,
  0x55,
  0x49,
  0x54,
  0x0a,
]);

const V1_PREFIX = new TextEncoder().encode("PROXY ");
/** Longest v1 header, CRLF included (the spec's 107 bytes). */
export const V1_MAX = 107;

/** An address the header carries. */
export type ProxyAddress =
  | { transport: "tcp" | "udp"; hostname: string; port: number }
  | { transport: "unix"; path: string };

/** A parsed header. */
export interface ProxyHeader {
  /** 1 or 2. */
  version: 1 | 2;
  /** `proxy` (addresses are the client's) or `local` (a health check: keep the real peer). */
  command: "proxy" | "local";
  /** The original client's address; absent for `local`, `UNKNOWN` and unspecified families. */
  source?: ProxyAddress;
  /** The address the client connected to (same rules as `source`). */
  destination?: ProxyAddress;
  /** v2 type-length-value records after the addresses, raw. */
  tlvs?: Uint8Array;
}

/** What the bytes so far say. */
export type ProxyVerdict =
  /** No PROXY header starts here: the bytes belong to the next protocol. */
  | { kind: "none" }
  /** A header may be starting; more bytes are needed to tell. */
  | { kind: "more" }
  /** A complete header of `length` bytes. */
  | { kind: "header"; length: number; header: ProxyHeader }
  /** A header that cannot be valid. */
  | { kind: "invalid"; reason: string };

function startsWith(buf: Uint8Array, prefix: Uint8Array): "yes" | "no" | "maybe" {
  const n = Math.min(buf.length, prefix.length);
  for (let i = 0; i < n; i++) if (buf[i] !== prefix[i]) return "no";
  return buf.length >= prefix.length ? "yes" : "maybe";
}

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const PORT = /^(0|[1-9]\d{0,4})$/;

function v6Valid(s: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.length > 45) return false;
  const halves = s.split("::");
  if (halves.length > 2) return false;
  const parts = (h: string) => (h === "" ? [] : h.split(":"));
  const head = parts(halves[0]);
  const tail = halves.length === 2 ? parts(halves[1]) : [];
  const all = [...head, ...tail];
  let groups = 0;
  for (let i = 0; i < all.length; i++) {
    const g = all[i];
    if (i === all.length - 1 && g.includes(".")) {
      if (!V4.test(g)) return false;
      groups += 2;
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) groups += 1;
    else return false;
  }
  return halves.length === 2 ? groups < 8 : groups === 8;
}

function parseV1(buf: Uint8Array): ProxyVerdict {
  const limit = Math.min(buf.length, V1_MAX);
  let end = -1;
  for (let i = V1_PREFIX.length; i < limit; i++) {
    if (buf[i] === 0x0d) {
      if (i + 1 >= buf.length) return { kind: "more" };
      if (buf[i + 1] !== 0x0a) return { kind: "invalid", reason: "v1 header: CR without LF" };
      end = i;
      break;
    }
    if (buf[i] === 0x0a) return { kind: "invalid", reason: "v1 header: LF without CR" };
    if (buf[i] < 0x20 || buf[i] > 0x7e) {
      return { kind: "invalid", reason: "v1 header: a byte that is not printable ASCII" };
    }
  }
  if (end < 0) {
    return buf.length >= V1_MAX
      ? { kind: "invalid", reason: `v1 header: no CRLF within ${V1_MAX} bytes` }
      : { kind: "more" };
  }
  const line = new TextDecoder().decode(buf.subarray(0, end));
  const f = line.split(" ");
  const length = end + 2;
  if (f[1] === "UNKNOWN") {
    return { kind: "header", length, header: { version: 1, command: "proxy" } };
  }
  if (f.length !== 6) return { kind: "invalid", reason: "v1 header: wrong number of fields" };
  const [, proto, src, dst, sport, dport] = f;
  if (proto !== "TCP4" && proto !== "TCP6") {
    return { kind: "invalid", reason: `v1 header: unknown protocol ${JSON.stringify(proto)}` };
  }
  const valid = proto === "TCP4" ? (s: string) => V4.test(s) : v6Valid;
  if (!valid(src) || !valid(dst)) {
    return { kind: "invalid", reason: `v1 header: an address that is not ${proto}` };
  }
  if (!PORT.test(sport) || !PORT.test(dport) || Number(sport) > 65535 || Number(dport) > 65535) {
    return { kind: "invalid", reason: "v1 header: invalid port" };
  }
  return {
    kind: "header",
    length,
    header: {
      version: 1,
      command: "proxy",
      source: { transport: "tcp", hostname: src, port: Number(sport) },
      destination: { transport: "tcp", hostname: dst, port: Number(dport) },
    },
  };
}

function ipv4(b: Uint8Array): string {
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

function ipv6(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  // the longest run of zero groups (two or more) becomes "::"
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}

function unixPath(b: Uint8Array): string {
  const nul = b.indexOf(0);
  return new TextDecoder().decode(nul < 0 ? b : b.subarray(0, nul));
}

function parseV2(buf: Uint8Array): ProxyVerdict {
  if (buf.length < 16) return { kind: "more" };
  const verCmd = buf[12];
  if (verCmd >> 4 !== 2) return { kind: "invalid", reason: `v2 header: version ${verCmd >> 4}` };
  const cmd = verCmd & 0x0f;
  if (cmd > 1) return { kind: "invalid", reason: `v2 header: unknown command ${cmd}` };
  const famProto = buf[13];
  const family = famProto >> 4;
  const proto = famProto & 0x0f;
  if (family > 3 || proto > 2) {
    return {
      kind: "invalid",
      reason: `v2 header: unknown family/transport 0x${famProto.toString(16)}`,
    };
  }
  const len = (buf[14] << 8) | buf[15];
  const length = 16 + len;
  if (buf.length < length) return { kind: "more" };
  const body = buf.subarray(16, length);
  const header: ProxyHeader = { version: 2, command: cmd === 1 ? "proxy" : "local" };
  const need = family === 1 ? 12 : family === 2 ? 36 : family === 3 ? 216 : 0;
  if (body.length < need) {
    return { kind: "invalid", reason: `v2 header: ${body.length} address bytes, need ${need}` };
  }
  if (cmd === 1 && proto !== 0 && family !== 0) {
    const transport = family === 3 ? "unix" : proto === 1 ? "tcp" : "udp";
    if (family === 1) {
      const v = new DataView(body.buffer, body.byteOffset, 12);
      header.source = {
        transport,
        hostname: ipv4(body.subarray(0, 4)),
        port: v.getUint16(8),
      } as ProxyAddress;
      header.destination = {
        transport,
        hostname: ipv4(body.subarray(4, 8)),
        port: v.getUint16(10),
      } as ProxyAddress;
    } else if (family === 2) {
      const v = new DataView(body.buffer, body.byteOffset, 36);
      header.source = {
        transport,
        hostname: ipv6(body.subarray(0, 16)),
        port: v.getUint16(32),
      } as ProxyAddress;
      header.destination = {
        transport,
        hostname: ipv6(body.subarray(16, 32)),
        port: v.getUint16(34),
      } as ProxyAddress;
    } else {
      header.source = { transport: "unix", path: unixPath(body.subarray(0, 108)) };
      header.destination = { transport: "unix", path: unixPath(body.subarray(108, 216)) };
    }
  }
  if (body.length > need) header.tlvs = body.slice(need);
  return { kind: "header", length, header };
}

/**
 * Reads a PROXY header from the start of `buf` (the bytes received so far).
 *
 * @example
 * ```ts
 * import { parseProxyHeader } from "./proxy_header.ts";
 * const bytes = new TextEncoder().encode("PROXY TCP4 192.0.2.1 192.0.2.2 5000 443\r\nGET /");
 * const v = parseProxyHeader(bytes);
 * // v.kind === "header", v.length === 41, v.header.source.hostname === "192.0.2.1"
 * ```
 */
export function parseProxyHeader(buf: Uint8Array): ProxyVerdict {
  if (buf.length === 0) return { kind: "more" };
  const v1 = startsWith(buf, V1_PREFIX);
  if (v1 === "maybe") return { kind: "more" };
  if (v1 === "yes") return parseV1(buf);
  const v2 = startsWith(buf, V2_SIGNATURE);
  if (v2 === "maybe") return { kind: "more" };
  if (v2 === "yes") return parseV2(buf);
  return { kind: "none" };
}

/** The shortest header: `PROXY UNKNOWN\r\n`. */
const SHORTEST = 15;
/** Fewest characters of each v1 field after the protocol: src, dst, sport, dport. */
const V1_FIELD_MIN: Record<string, number[]> = { TCP4: [7, 7, 1, 1], TCP6: [2, 2, 1, 1] };

/**
 * The fewest bytes that can still follow `buf` in a whole PROXY header that starts with it; 0
 * when `buf` holds a whole header or none can start there. A listener that reads no more than
 * this at a time never reads past the header into the bytes of the protocol after it.
 *
 * @example
 * ```ts
 * import { proxyHeaderNeeds } from "./proxy_header.ts";
 * proxyHeaderNeeds(new Uint8Array(0)); // 15, as in "PROXY UNKNOWN\r\n"
 * proxyHeaderNeeds(new TextEncoder().encode("PROXY TCP4 ")); // 20
 * ```
 */
export function proxyHeaderNeeds(buf: Uint8Array): number {
  if (buf.length === 0) return SHORTEST;
  if (parseProxyHeader(buf).kind !== "more") return 0;
  if (startsWith(buf, V2_SIGNATURE) !== "no") {
    if (buf.length < 16) return 16 - buf.length;
    return Math.max(1, 16 + ((buf[14] << 8) | buf[15]) - buf.length);
  }
  if (buf.length < V1_PREFIX.length) return SHORTEST - buf.length;
  if (buf[buf.length - 1] === 0x0d) return 1;
  const parts = String.fromCharCode(...buf.subarray(V1_PREFIX.length, V1_MAX)).split(" ");
  const proto = parts[0];
  if (parts.length === 1) {
    // the protocol is still arriving: the shortest header it can begin
    let best = "UNKNOWN".startsWith(proto) ? 7 - proto.length + 2 : Infinity;
    for (const [p, mins] of Object.entries(V1_FIELD_MIN)) {
      if (!p.startsWith(proto)) continue;
      best = Math.min(best, p.length - proto.length + mins.reduce((a, m) => a + 1 + m, 0) + 2);
    }
    return best === Infinity ? 1 : best;
  }
  const mins = V1_FIELD_MIN[proto];
  if (!mins) return 2; // UNKNOWN (anything up to CRLF), or invalid once CRLF comes
  const fields = parts.slice(1);
  let need = 2;
  for (let k = 0; k < mins.length; k++) {
    if (k >= fields.length) need += 1 + mins[k];
    else if (k === fields.length - 1) need += Math.max(0, mins[k] - fields[k].length);
  }
  return need;
}

/** Writes a v1 header (tests, and anything that sends the PROXY protocol). */
export function encodeProxyV1(
  source: { hostname: string; port: number },
  destination: { hostname: string; port: number },
): Uint8Array {
  const fam = source.hostname.includes(":") ? "TCP6" : "TCP4";
  return new TextEncoder().encode(
    `PROXY ${fam} ${source.hostname} ${destination.hostname} ${source.port} ${destination.port}\r\n`,
  );
}

function v4Bytes(s: string): number[] {
  return s.split(".").map(Number);
}

function v6Bytes(s: string): number[] {
  const [h, t] = s.includes("::") ? s.split("::") : [s, undefined];
  const head = h ? h.split(":") : [];
  const tail = t ? t.split(":") : [];
  const groups = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * Writes a v2 header: `proxy` with TCP addresses of one family, or `local` with none.
 *
 * @example
 * ```ts
 * import { encodeProxyV2, parseProxyHeader } from "./proxy_header.ts";
 * const h = encodeProxyV2({ source: { hostname: "2001:db8::1", port: 1 }, destination: { hostname: "::1", port: 443 } });
 * parseProxyHeader(h).kind; // "header"
 * ```
 */
export function encodeProxyV2(
  o: {
    local?: boolean;
    source?: { hostname: string; port: number };
    destination?: { hostname: string; port: number };
    tlvs?: Uint8Array;
  },
): Uint8Array {
  const body: number[] = [];
  let fam = 0;
  if (!o.local && o.source && o.destination) {
    const six = o.source.hostname.includes(":");
    fam = six ? 0x21 : 0x11;
    const bytes = six ? v6Bytes : v4Bytes;
    body.push(...bytes(o.source.hostname), ...bytes(o.destination.hostname));
    body.push(o.source.port >> 8, o.source.port & 0xff);
    body.push(o.destination.port >> 8, o.destination.port & 0xff);
  }
  if (o.tlvs) body.push(...o.tlvs);
  const out = new Uint8Array(16 + body.length);
  out.set(V2_SIGNATURE);
  out[12] = o.local ? 0x20 : 0x21;
  out[13] = fam;
  out[14] = body.length >> 8;
  out[15] = body.length & 0xff;
  out.set(body, 16);
  return out;
}
