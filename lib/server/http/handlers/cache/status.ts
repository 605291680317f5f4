/**
 * `Cache-Status` (RFC 9211): one list member per cache, the cache's name then its parameters
 * (`hit`, `fwd`, `fwd-status`, `ttl`, `stored`, `collapsed`, `key`, `detail`). A member is
 * appended to the value the answer already has, so caches upstream of this one stay listed
 * first. The `detail` values are Souin's (`NO-STORE-DIRECTIVE`, `UPSTREAM-VARY-STAR`...), so
 * monitoring written for the plugin reads them.
 *
 * @module
 */

/** What one answer's member says. */
export interface StatusParams {
  hit?: boolean;
  fwd?: "bypass" | "method" | "uri-miss" | "vary-miss" | "miss" | "request" | "stale";
  fwdStatus?: number;
  /** Seconds of freshness left (negative: stale). */
  ttl?: number;
  stored?: boolean;
  collapsed?: boolean;
  key?: string;
  detail?: string;
}

const TOKEN = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*$/;

/** An sf-string of `text`, characters outside printable ASCII percent-encoded. */
function sfString(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += "\\" + ch;
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else {
      for (const b of new TextEncoder().encode(ch)) {
        out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
      }
    }
  }
  return `"${out}"`;
}

/** The cache's name as a list member starts with it (a token, or a string when it is none). */
export function statusName(name: string): string {
  return TOKEN.test(name) ? name : sfString(name);
}

/**
 * One `Cache-Status` member.
 *
 * @example
 * ```ts
 * import { statusMember } from "./status.ts";
 * statusMember("Gatehouse", { hit: true, ttl: 58, key: "GET-http-a.example-/" });
 * // 'Gatehouse; hit; ttl=58; key="GET-http-a.example-/"'
 * ```
 */
export function statusMember(name: string, p: StatusParams): string {
  let s = name;
  if (p.hit) s += "; hit";
  if (p.fwd) s += `; fwd=${p.fwd}`;
  if (p.fwdStatus !== undefined) s += `; fwd-status=${p.fwdStatus}`;
  if (p.ttl !== undefined) s += `; ttl=${p.ttl}`;
  if (p.stored) s += "; stored";
  if (p.collapsed) s += "; collapsed";
  if (p.key !== undefined) s += `; key=${sfString(p.key)}`;
  if (p.detail) s += `; detail=${p.detail}`;
  return s;
}

/** `existing` with `member` appended. */
export function appendStatus(existing: string | null, member: string): string {
  return existing ? `${existing}, ${member}` : member;
}
