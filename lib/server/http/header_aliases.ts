/**
 * Request header names that a CGI-style backend folds onto another name. FastCGI, CGI and
 * PHP turn a field name into a variable by upper-casing it and writing `-` as `_`
 * (`X-Forwarded-For` becomes `HTTP_X_FORWARDED_FOR`), and PHP also writes `.` as `_` when it
 * fills `$_SERVER`; so a client's `X_Forwarded_For` or `Remote.User` lands on the same
 * variable as the `X-Forwarded-For` or `Remote-User` the proxy sets, and whichever comes last
 * wins. A server drops every request field whose name contains `_` or `.` when the request's
 * headers are first read (`RequestContext.headers`), so no matcher, placeholder, handler or
 * upstream sees one, as current Caddy does before its routes (GHSA-f59h-q822-g45g,
 * GHSA-49wc-4hcv-v58q) and nginx does by default (`underscores_in_headers off`,
 * `ignore_invalid_headers on`). A request whose routes read no header pays nothing for it.
 *
 * `expected_underscore_headers` and `expected_dot_headers` (server fields, as Caddy's) keep
 * the names they list: entries are compared case-insensitively, a trailing `*` matches a
 * prefix, and the hyphenated spelling of each entry (`webhook_id` → `webhook-id`) is dropped
 * instead, so the two spellings never both arrive. A name with both `_` and `.` is kept only
 * when one list names it exactly.
 *
 * @module
 */
import type { Logger } from "../module/instance.ts";
import type { RequestContext } from "./context.ts";
import type { Decoder } from "../config/decode.ts";

/** A field name's characters (RFC 9110 `tchar`), without the trailing glob. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** One allowlist (the entries of one field), lower case. */
interface Allowlist {
  /** Exact names kept. */
  exact: Set<string>;
  /** Their hyphenated spellings, dropped. */
  exactHyphen: Set<string>;
  /** Prefixes kept (from `name*` entries) and their hyphenated prefixes, dropped. */
  prefixes: { keep: string; drop: string }[];
}

function parseAllowlist(d: Decoder, field: string, sep: "_" | "."): Allowlist | null {
  const entries = d.strings(field);
  if (!entries || entries.length === 0) return null;
  const list: Allowlist = { exact: new Set(), exactHyphen: new Set(), prefixes: [] };
  entries.forEach((entry, i) => {
    const at = `${field}[${i}]`;
    const glob = entry.endsWith("*");
    const name = (glob ? entry.slice(0, -1) : entry).toLowerCase();
    if (name.includes("*")) {
      d.failAt(
        at,
        `${JSON.stringify(entry)} has '*' in an invalid position (only a trailing '*' is allowed)`,
      );
    }
    if (!TOKEN.test(name)) d.failAt(at, `${JSON.stringify(entry)} is not a header field name`);
    if (!name.includes(sep)) {
      d.failAt(at, `${JSON.stringify(entry)} does not contain a ${JSON.stringify(sep)}`);
    }
    const hyphen = name.replaceAll(sep, "-");
    if (glob) list.prefixes.push({ keep: name, drop: hyphen });
    else {
      list.exact.add(name);
      list.exactHyphen.add(hyphen);
    }
  });
  return list;
}

function keeps(list: Allowlist | null, name: string): boolean {
  if (list === null) return false;
  if (list.exact.has(name)) return true;
  for (const p of list.prefixes) if (name.startsWith(p.keep)) return true;
  return false;
}

function dropsHyphenated(list: Allowlist | null, name: string): boolean {
  if (list === null) return false;
  if (list.exactHyphen.has(name)) return true;
  for (const p of list.prefixes) if (name.startsWith(p.drop)) return true;
  return false;
}

/** A server's rule for header names with `_` or `.` (see the module doc). */
export class HeaderAliasFilter {
  #underscore: Allowlist | null;
  #dot: Allowlist | null;
  #logger: Logger | null;

  private constructor(underscore: Allowlist | null, dot: Allowlist | null, logger: Logger | null) {
    this.#underscore = underscore;
    this.#dot = dot;
    this.#logger = logger;
  }

  /** Decodes `expected_underscore_headers` and `expected_dot_headers` of a server's decoder. */
  static parse(d: Decoder, logger: Logger | null = null): HeaderAliasFilter {
    return new HeaderAliasFilter(
      parseAllowlist(d, "expected_underscore_headers", "_"),
      parseAllowlist(d, "expected_dot_headers", "."),
      logger,
    );
  }

  /**
   * The request field names (lower case) this rule drops from `names`.
   *
   * @example
   * ```ts
   * import { HeaderAliasFilter } from "./header_aliases.ts";
   * import { Decoder } from "../config/decode.ts";
   * HeaderAliasFilter.parse(new Decoder({}, "srv")).dropped(["x-forwarded-for", "x_forwarded_for"]);
   * // ["x_forwarded_for"]
   * ```
   */
  dropped(names: Iterable<string>): string[] {
    const out: string[] = [];
    const lists = this.#underscore !== null || this.#dot !== null;
    for (const name of names) {
      const underscore = name.indexOf("_") >= 0;
      const dot = name.indexOf(".") >= 0;
      if (underscore && dot) {
        // a glob cannot vouch for a free suffix that holds the other separator
        if (!this.#underscore?.exact.has(name) && !this.#dot?.exact.has(name)) out.push(name);
      } else if (underscore) {
        if (!keeps(this.#underscore, name)) out.push(name);
      } else if (dot) {
        if (!keeps(this.#dot, name)) out.push(name);
      } else if (
        lists && (dropsHyphenated(this.#underscore, name) || dropsHyphenated(this.#dot, name))
      ) out.push(name);
    }
    return out;
  }

  /** Drops the request's aliased fields (called once, when its headers are first read). */
  apply(c: RequestContext): void {
    let names: string[] | null = null;
    const lists = this.#underscore !== null || this.#dot !== null;
    for (const [name] of c.headers) {
      if (lists || name.indexOf("_") >= 0 || name.indexOf(".") >= 0) (names ??= []).push(name);
    }
    if (names === null) return;
    const drop = this.dropped(names);
    if (drop.length === 0) return;
    const hs = c.mutableHeaders();
    for (const name of drop) {
      hs.delete(name);
      if (this.#logger?.enabled("DEBUG")) {
        this.#logger.debug("dropping header whose name a CGI backend would fold", {
          header: name,
        });
      }
    }
  }
}
