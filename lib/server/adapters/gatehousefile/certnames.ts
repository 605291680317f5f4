/**
 * Which names can have certificates, and which public ones (certmagic's rules), as the
 * adapter needs them to split automation policies between the ACME and internal issuers.
 *
 * @module
 */
import { parseIPv4, parseIPv6, splitHostPort } from "../../caddyfile/netaddr.ts";

/** The host of `host:port` (brackets of a bare IPv6 address removed). */
export function hostOnly(hostport: string): string {
  if (!hostport.includes(":") && !hostport.startsWith("[")) return hostport;
  try {
    return splitHostPort(hostport)[0];
  } catch {
    if (hostport.length > 1 && hostport.startsWith("[") && hostport.endsWith("]")) {
      return hostport.slice(1, -1);
    }
    return hostport;
  }
}

/** Go's `net.ParseIP`: an IPv4 or IPv6 address without zone, as 16 bytes; else undefined. */
function ipBytes(s: string): number[] | undefined {
  const v4 = parseIPv4(s);
  if (v4) return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4];
  if (s.includes("%")) return undefined;
  const v6 = parseIPv6(s);
  if (!v6) return undefined;
  return v6.groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** True when the name is an IP address. */
export function subjectIsIP(subj: string): boolean {
  return ipBytes(subj) !== undefined;
}

const PRIVATE_V4: [number[], number][] = [
  [[127, 0, 0, 0], 8],
  [[0, 0, 0, 0], 16],
  [[10, 0, 0, 0], 8],
  [[172, 16, 0, 0], 12],
  [[192, 168, 0, 0], 16],
  [[169, 254, 0, 0], 16],
];
const PRIVATE_V6: [number[], number][] = [
  [[0, 0], 7],
  [[0xfe, 0x80], 10],
  [[0xfc, 0], 7],
];

function inPrefix(ip: number[], net: number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3, bit = 7 - (i & 7);
    if (((ip[byte] >> bit) & 1) !== (((net[byte] ?? 0) >> bit) & 1)) return false;
  }
  return true;
}

function isInternalIP(addr: string): boolean {
  const ip = ipBytes(hostOnly(addr));
  if (!ip) return false;
  const isV4 = ip.slice(0, 12).every((b, i) => b === (i < 10 ? 0 : 0xff));
  if (isV4) return PRIVATE_V4.some(([n, b]) => inPrefix(ip.slice(12), n, b));
  return PRIVATE_V6.some(([n, b]) => inPrefix(ip, n, b));
}

/** True for names only a private CA can certify (localhost, .local, private IPs, ...). */
export function subjectIsInternal(subj: string): boolean {
  let s = hostOnly(subj);
  if (s.endsWith(".")) s = s.slice(0, -1);
  s = s.toLowerCase();
  return s === "localhost" || s.endsWith(".localhost") || s.endsWith(".local") ||
    s.endsWith(".internal") || s.endsWith(".home.arpa") || isInternalIP(s);
}

/** True when the name can have a certificate at all. */
export function subjectQualifiesForCert(subj: string): boolean {
  return subj.trim() !== "" && !subj.startsWith(".") && !subj.endsWith(".") &&
    (!subj.includes("*") || subj.startsWith("*.") || subj === "*") &&
    !/[()[\]{}<> \t\n"\\!@#$%^&|;'+=]/.test(subj);
}

/** True when a public CA can certify the name. */
export function subjectQualifiesForPublicCert(subj: string): boolean {
  return subjectQualifiesForCert(subj) && !subjectIsInternal(subj) &&
    (!subj.includes("*") ||
      (subj.split("*").length === 2 && subj.split(".").length > 2 && subj.length > 2 &&
        subj.startsWith("*.")));
}

/** True when `subject` is `wildcard` or matched by it (one `*` label). */
export function matchWildcard(subject: string, wildcard: string): boolean {
  subject = hostOnly(subject).toLowerCase();
  wildcard = wildcard.toLowerCase();
  if (subject === wildcard) return true;
  if (!wildcard.includes("*")) return false;
  const labels = subject.split(".");
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] === "") continue;
    labels[i] = "*";
    if (labels.join(".") === wildcard) return true;
  }
  return false;
}
