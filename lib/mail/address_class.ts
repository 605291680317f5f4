/**
 * What a host of a URL is, for deciding where a webhook may be delivered: an IP address by the
 * class of network it belongs to (loopback, private, link-local, shared, unspecified, cloud
 * metadata, multicast, reserved, or public), a name by its form (`localhost` and `*.localhost`,
 * special-use and private-use domains, single labels, metadata names, or public).
 *
 * The host is read as the WHATWG URL parser normalises it (`new URL(...).hostname`): every
 * spelling of an IPv4 address it accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`,
 * full-width digits, percent-escapes) comes out as the dotted quad, and an IPv6 address in
 * brackets in its compressed form, so this module only ever sees those two forms and names.
 * IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64
 * (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`) addresses are classed by the IPv4
 * address they carry; IPv4-compatible addresses (`::a.b.c.d`, deprecated) are reserved.
 *
 * Public means globally reachable unicast: an IPv4 address outside the ranges the IANA
 * special-purpose registry marks not globally reachable (and outside multicast and 240/4), an
 * IPv6 address in 2000::/3 outside its special-purpose ranges.
 *
 * @module
 */
import { parseIP } from "../server/net/ip.ts";

/** The class of a host: `public`, or why it is not. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "shared"
  | "unspecified"
  | "metadata"
  | "multicast"
  | "reserved"
  | "local-name";

/** A URL host, classed: an IP address (128-bit, IPv4 as IPv4-mapped) or a name. */
export type ClassifiedHost =
  | { kind: "ip"; ip: bigint; address: string; class: AddressClass }
  | { kind: "name"; name: string; class: AddressClass };

/** A range of 128-bit addresses and its class, or "embedded" when it carries an IPv4 address. */
interface Range {
  net: bigint;
  mask: bigint;
  class: AddressClass | "embedded-v4" | "6to4";
}

const ALL = (1n << 128n) - 1n;
const MAPPED = 0xffffn << 32n;

function range(cidr: string, cls: Range["class"]): Range {
  const [addr, bitsText] = cidr.split("/");
  const ip = parseIP(addr);
  if (ip === null) throw new Error(`bad range ${cidr}`);
  const v4 = !addr.includes(":");
  const bits = Number(bitsText ?? (v4 ? 32 : 128)) + (v4 ? 96 : 0);
  const mask = bits === 0 ? 0n : (ALL << BigInt(128 - bits)) & ALL;
  return { net: ip & mask, mask, class: cls };
}

/** Specific ranges first: the first match wins. */
const V4_RANGES: readonly Range[] = [
  range("169.254.169.254/32", "metadata"), // AWS, GCP, Azure, OpenStack, DigitalOcean ...
  range("100.100.100.200/32", "metadata"), // Alibaba Cloud
  range("192.0.0.192/32", "metadata"), // Oracle Cloud
  range("0.0.0.0/8", "unspecified"), // "this network"; 0.0.0.0 reaches the local host
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "shared"), // carrier-grade NAT (RFC 6598)
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "reserved"), // IETF protocol assignments
  range("192.0.2.0/24", "reserved"), // documentation
  range("192.88.99.0/24", "reserved"), // 6to4 relay anycast (deprecated)
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "reserved"), // benchmarking
  range("198.51.100.0/24", "reserved"), // documentation
  range("203.0.113.0/24", "reserved"), // documentation
  range("224.0.0.0/4", "multicast"),
  range("240.0.0.0/4", "reserved"), // future use, and 255.255.255.255 (broadcast)
];

const V6_RANGES: readonly Range[] = [
  range("::/128", "unspecified"),
  range("::1/128", "loopback"),
  range("::ffff:0:0/96", "embedded-v4"), // IPv4-mapped (how IPv4 is held here)
  range("::ffff:0:0:0/96", "embedded-v4"), // IPv4-translated (SIIT)
  range("::/96", "reserved"), // IPv4-compatible (deprecated)
  range("64:ff9b::/96", "embedded-v4"), // NAT64 well-known prefix
  range("64:ff9b:1::/48", "private"), // NAT64 local use
  range("100::/64", "reserved"), // discard-only
  range("2001::/23", "reserved"), // IETF protocol assignments (Teredo, ORCHID, ...)
  range("2001:db8::/32", "reserved"), // documentation
  range("2002::/16", "6to4"),
  range("3fff::/20", "reserved"), // documentation
  range("5f00::/16", "reserved"), // SRv6 SIDs
  range("fd00:ec2::254/128", "metadata"), // AWS metadata over IPv6
  range("fc00::/7", "private"), // unique local (RFC 4193)
  range("fe80::/10", "link-local"),
  range("fec0::/10", "private"), // site-local (deprecated)
  range("ff00::/8", "multicast"),
];

const GLOBAL_UNICAST = range("2000::/3", "public");

function within(ip: bigint, r: Range): boolean {
  return (ip & r.mask) === r.net;
}

/**
 * The class of an address (128-bit, IPv4 as IPv4-mapped, as `parseIP` gives it).
 *
 * @example
 * ```ts
 * import { classifyIP } from "./address_class.ts";
 * import { parseIP } from "../server/net/ip.ts";
 * classifyIP(parseIP("169.254.169.254")!); // "metadata"
 * classifyIP(parseIP("2606:4700::1111")!); // "public"
 * ```
 */
export function classifyIP(ip: bigint): AddressClass {
  if ((ip >> 32n) === 0xffffn) {
    for (const r of V4_RANGES) if (within(ip, r)) return r.class as AddressClass;
    return "public";
  }
  for (const r of V6_RANGES) {
    if (!within(ip, r)) continue;
    if (r.class === "embedded-v4") return classifyIP(MAPPED | (ip & 0xffffffffn));
    if (r.class === "6to4") return classifyIP(MAPPED | ((ip >> 80n) & 0xffffffffn));
    return r.class;
  }
  return within(ip, GLOBAL_UNICAST) ? "public" : "reserved";
}

/**
 * The class of an address in text (`127.0.0.1`, `::1`, `[::1]`), as a resolver answers it;
 * null when it is not an IP address.
 *
 * @example
 * ```ts
 * import { classifyAddress } from "./address_class.ts";
 * classifyAddress("10.1.2.3"); // "private"
 * classifyAddress("example.com"); // null
 * ```
 */
export function classifyAddress(address: string): AddressClass | null {
  const ip = parseIP(address);
  return ip === null ? null : classifyIP(ip);
}

/** Names that stand for cloud metadata services. */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata"]);
/**
 * Domains only ever meaningful inside a network: ICANN's private-use `.internal`, multicast
 * DNS's `.local` (RFC 6762), `.home.arpa` (RFC 8375) and the hosts files' `.localdomain`.
 */
const LOCAL_SUFFIXES = ["internal", "local", "localdomain", "home.arpa"];

/**
 * The class of a host name (lower case, as the URL parser gives it; a final dot is ignored):
 * `loopback` for `localhost` and `*.localhost`, `metadata` for the metadata services' names,
 * `local-name` for single labels (resolved through local search domains) and names under
 * `.internal`, `.local`, `.localdomain` and `.home.arpa`, else `public`
 * (whose addresses are then checked once resolved).
 *
 * @example
 * ```ts
 * import { classifyName } from "./address_class.ts";
 * classifyName("metadata.google.internal"); // "metadata"
 * classifyName("api.example.com"); // "public"
 * ```
 */
export function classifyName(hostname: string): AddressClass {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  if (METADATA_NAMES.has(name)) return "metadata";
  // a single label goes through the resolver's search domains; an empty label never resolves
  if (!name.includes(".") || name.split(".").includes("")) return "local-name";
  if (LOCAL_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`))) return "local-name";
  return "public";
}

/**
 * Classes the host of a parsed URL (`url.hostname`: a dotted quad, a bracketed IPv6 address or
 * a name, as the URL parser normalised it).
 *
 * @example
 * ```ts
 * import { classifyHost } from "./address_class.ts";
 * classifyHost(new URL("http://2130706433/").hostname); // { kind: "ip", class: "loopback", ... }
 * ```
 */
export function classifyHost(hostname: string): ClassifiedHost {
  const bracketed = hostname.startsWith("[") && hostname.endsWith("]");
  const ip = bracketed || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(hostname) ? parseIP(hostname) : null;
  if (ip !== null) {
    return {
      kind: "ip",
      ip,
      address: bracketed ? hostname.slice(1, -1) : hostname,
      class: classifyIP(ip),
    };
  }
  return {
    kind: "name",
    name: hostname.toLowerCase().replace(/\.$/, ""),
    class: classifyName(hostname),
  };
}

/** In words, for error messages: "a loopback address", "a cloud metadata address" ... */
export function describeClass(c: AddressClass): string {
  switch (c) {
    case "public":
      return "a public address";
    case "loopback":
      return "a loopback address";
    case "private":
      return "a private address (RFC 1918, RFC 4193)";
    case "link-local":
      return "a link-local address";
    case "shared":
      return "a shared (carrier-grade NAT) address";
    case "unspecified":
      return "an unspecified address (0.0.0.0/8, ::)";
    case "metadata":
      return "a cloud metadata address";
    case "multicast":
      return "a multicast address";
    case "reserved":
      return "a reserved or special-purpose address";
    case "local-name":
      return "a name that only resolves inside a network";
  }
}
