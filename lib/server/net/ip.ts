/**
 * IP addresses and CIDR ranges for `remote_ip`, `client_ip`, trusted proxies and `ip_hash`:
 * parsed once into 128-bit numbers (IPv4 as IPv4-mapped IPv6) so a containment test is two
 * bigint operations.
 *
 * @module
 */

/** A parsed CIDR range. */
export interface IPRange {
  /** Network address, 128-bit. */
  readonly net: bigint;
  /** Mask, 128-bit. */
  readonly mask: bigint;
}

const V4_MAPPED = 0xffffn << 32n;
const ALL = (1n << 128n) - 1n;

function parseV4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = (n << 8n) | BigInt(v);
  }
  return V4_MAPPED | n;
}

/**
 * Parses an IPv4 or IPv6 address (zone and brackets stripped) to a 128-bit number; null when
 * it is not an IP.
 *
 * @example
 * ```ts
 * import { parseIP } from "./ip.ts";
 * parseIP("127.0.0.1") !== null; // true
 * ```
 */
export function parseIP(input: string): bigint | null {
  let s = input.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) return parseV4(s);
  let tail: bigint | null = null;
  let tailGroups = 0;
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = v4 & 0xffffffffn;
    tailGroups = 2;
    s = s.slice(0, lastColon + 1) + "0";
    tailGroups = 2;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  if (tail !== null) (rest.length ? rest : head).pop();
  const groupsWanted = 8 - tailGroups;
  const fill = groupsWanted - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? fill : 0).fill("0"), ...rest];
  let n = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    n = (n << 16n) | BigInt(parseInt(g, 16));
  }
  if (tail !== null) n = (n << 32n) | tail;
  return n;
}

/** True when a 128-bit address is IPv4-mapped. */
export function isV4(ip: bigint): boolean {
  return (ip >> 32n) === 0xffffn;
}

/**
 * Parses a CIDR range or a single address (`10.0.0.0/8`, `::1`, `192.168.1.5`).
 *
 * @example
 * ```ts
 * import { ipInRanges, parseIP, parseRange } from "./ip.ts";
 * ipInRanges(parseIP("10.1.2.3")!, [parseRange("10.0.0.0/8")]); // true
 * ```
 */
export function parseRange(input: string): IPRange {
  const slash = input.indexOf("/");
  const addr = slash < 0 ? input : input.slice(0, slash);
  const ip = parseIP(addr);
  if (ip === null) throw new Error(`invalid IP range: ${input}`);
  let bits = isV4(ip) && !addr.includes(":") ? 32 : 128;
  const width = bits;
  if (slash >= 0) {
    bits = Number(input.slice(slash + 1));
    if (!Number.isInteger(bits) || bits < 0 || bits > width) {
      throw new Error(`invalid IP range: ${input}`);
    }
  }
  const prefix = width === 32 ? 96 + bits : bits;
  const mask = prefix === 0 ? 0n : (ALL << BigInt(128 - prefix)) & ALL;
  return { net: ip & mask, mask };
}

/** True when the address is inside any of the ranges. */
export function ipInRanges(ip: bigint, ranges: readonly IPRange[]): boolean {
  for (const r of ranges) if ((ip & r.mask) === r.net) return true;
  return false;
}

/** The ranges Caddy's `private_ranges` shortcut stands for. */
export const PRIVATE_RANGES: readonly string[] = [
  "192.168.0.0/16",
  "172.16.0.0/12",
  "10.0.0.0/8",
  "127.0.0.1/8",
  "fd00::/8",
  "::1",
];

/** Expands `private_ranges` and parses every entry. */
export function parseRanges(list: readonly string[]): IPRange[] {
  const out: IPRange[] = [];
  for (const s of list) {
    if (s === "private_ranges") out.push(...PRIVATE_RANGES.map(parseRange));
    else out.push(parseRange(s));
  }
  return out;
}

/** An address as Go's `netip.Addr.String` writes it (RFC 5952 for IPv6, dotted IPv4 tail when mapped). */
function formatIP(ip: bigint, v4: boolean): string {
  if (v4) {
    return [24n, 16n, 8n, 0n].map((s) => String((ip >> s) & 0xffn)).join(".");
  }
  if (isV4(ip)) return `::ffff:${formatIP(ip, true)}`;
  const groups: number[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(Number((ip >> s) & 0xffffn));
  // the longest run of two or more zero groups (the first of equal ones) becomes "::"
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(":");
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/**
 * The network of `address` that keeps its top `bits` bits, written as Go's
 * `netip.Addr.Prefix(bits).String()` does (`1.2.3.0/24`, `2001:db8::/32`); an IPv4 address
 * counts 32 bits, an IPv6 one (an IPv4-mapped one too) 128. Null when `address` is not an IP
 * or `bits` is out of range.
 *
 * @example
 * ```ts
 * import { ipPrefix } from "./ip.ts";
 * ipPrefix("192.168.7.9", 16); // "192.168.0.0/16"
 * ```
 */
export function ipPrefix(address: string, bits: number): string | null {
  const ip = parseIP(address);
  if (ip === null) return null;
  const v4 = !address.includes(":");
  const width = v4 ? 32 : 128;
  if (!Number.isInteger(bits) || bits < 0 || bits > width) return null;
  const keep = v4 ? 96 + bits : bits;
  const mask = keep === 0 ? 0n : (ALL << BigInt(128 - keep)) & ALL;
  return `${formatIP(v4 ? ip & mask & 0xffffffffn : ip & mask, v4)}/${bits}`;
}
