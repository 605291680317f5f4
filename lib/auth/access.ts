/**
 * Who may sign in: the owner allowlist, e-mail domains and the three access modes. E-mails and
 * list entries are compared in the canonical form of `email.ts` (trimmed, ASCII letters
 * lowercased, nothing else changed), so Unicode look-alikes never match; a domain matches only
 * exactly (the part after the last `@`), so `evil-example.com` and `example.com.evil.net`
 * never pass for `example.com`.
 *
 * @module
 */
import { asciiLower, canonicalEmail } from "./email.ts";

/** A site's access mode: `public` (any e-mail), `domain` (listed domains, plus owners), `owners`. */
export type AccessMode = "public" | "domain" | "owners";

/** Input of {@linkcode emailAllowed}. */
export interface EmailAllowedInput {
  /** The site's access mode. */
  mode: AccessMode;
  /** The provider-verified e-mail to check. */
  email: string;
  /** Comma-separated owner e-mails (`OWNER_EMAILS`). */
  owners?: string;
  /** Comma-separated e-mail domains (`ACCESS_DOMAINS`); a leading `@` is ignored. */
  domains?: string;
}

function list(raw: unknown): string[] {
  if (typeof raw !== "string") return [];
  return raw.split(",").map((s) => asciiLower(s.trim())).filter((s) => s.length > 0);
}

/**
 * Whether `email` is in the comma-separated owner list, both in the canonical form
 * ({@linkcode canonicalEmail}). An empty list contains nobody.
 *
 * @example
 * ```ts
 * import { isOwner } from "@gatehouse/gatehouse";
 * console.log(isOwner("ann@example.com, bob@example.com", " Bob@Example.COM ")); // true
 * ```
 */
export function isOwner(owners: string, email: string): boolean {
  const e = canonicalEmail(email);
  return e !== null && list(owners).includes(e);
}

/**
 * Whether `email` may sign in under the access mode: `public` allows any e-mail; `domain`
 * allows e-mails whose domain is exactly one of `domains`, and owners; `owners` allows only
 * owners. Empty lists allow nobody in `owners` and `domain` mode.
 *
 * @example
 * ```ts
 * import { emailAllowed } from "@gatehouse/gatehouse";
 * console.log(emailAllowed({ mode: "domain", email: "x@example.com", domains: "example.com" })); // true
 * console.log(emailAllowed({ mode: "domain", email: "x@evil-example.com", domains: "example.com" })); // false
 * ```
 */
export function emailAllowed(input: EmailAllowedInput): boolean {
  const e = canonicalEmail(input?.email);
  if (e === null) return false;
  switch (input.mode) {
    case "public":
      return true;
    case "domain": {
      const domain = e.slice(e.lastIndexOf("@") + 1);
      const domains = list(input.domains).map((d) => d.startsWith("@") ? d.slice(1) : d);
      return domains.includes(domain) || list(input.owners).includes(e);
    }
    case "owners":
      return list(input.owners).includes(e);
    default:
      return false;
  }
}

/**
 * Maps a raw setting (e.g. `ACCESS_MODE`) to an access mode; anything unknown (or missing)
 * becomes the strictest, `owners`. Trimmed and case-insensitive.
 *
 * @example
 * ```ts
 * import { parseAccessMode } from "@gatehouse/gatehouse";
 * console.log(parseAccessMode("Domain")); // "domain"
 * console.log(parseAccessMode("everyone")); // "owners"
 * ```
 */
export function parseAccessMode(raw: string | null | undefined): AccessMode {
  const m = typeof raw === "string" ? asciiLower(raw.trim()) : "";
  return m === "public" || m === "domain" ? m : "owners";
}
