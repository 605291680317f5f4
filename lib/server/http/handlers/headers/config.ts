/**
 * The config of `http.handlers.headers`, field by field as Caddy's `Handler`, `HeaderOps`,
 * `RespHeaderOps` and `Replacement` (`modules/caddyhttp/headers/headers.go`), and their
 * decoders. The header operations are one shape wherever they appear: this handler's
 * `request` and `response`, `reverse_proxy`'s `headers` and `push`'s `headers` decode them
 * here ({@linkcode decodeHeaderOps}); `http/header_ops.ts` compiles them.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { ConfigError } from "../../../config/error.ts";
import { goRegExp } from "../../../config/regexp.ts";
import { decodeResponseMatcher, type ResponseMatcherConfig } from "../../response_matcher.ts";

/** One in-place replacement in a header value: a substring or a regular expression. */
export type ReplacementConfig = {
  /** The substring to search for (placeholders allowed). */
  search?: string;
  /** The regular expression to search with (Go syntax; `${1}`, `${name}` in `replace`). */
  search_regexp?: string;
  /** The string with which to replace matches (placeholders allowed). */
  replace?: string;
};

/** Manipulations of a header set; names and values may hold placeholders. */
export type HeaderOpsConfig = {
  /** Adds header fields; does not replace existing ones. */
  add?: Record<string, string[]>;
  /** Sets header fields; replaces existing ones. */
  set?: Record<string, string[]>;
  /**
   * Names of fields to delete: exact, or with basic wildcards (`*suffix`, `prefix*`,
   * `*substring*`, `*` for all).
   */
  delete?: string[];
  /** In-place replacements by field name; the field `*` means every field. */
  replace?: Record<string, ReplacementConfig[]>;
};

/** Manipulations of response headers, optionally deferred until the response is written. */
export type RespHeaderOpsConfig = HeaderOpsConfig & {
  /** If set, the operations are deferred and only performed when the response matches. */
  require?: ResponseMatcherConfig;
  /** Defer the operations until the response is written (needed to delete fields it sets). */
  deferred?: boolean;
};

/** `http.handlers.headers`. */
export type HeadersConfig = {
  /** The module name. */
  handler: "headers";
  /** Operations on the request's header fields. */
  request?: HeaderOpsConfig;
  /** Operations on the response's header fields. */
  response?: RespHeaderOpsConfig;
};

/** The fields of {@linkcode HeadersConfig}. */
export const HEADERS_FIELDS: readonly (keyof HeadersConfig)[] = ["handler", "request", "response"];

/** The fields of {@linkcode HeaderOpsConfig}. */
export const HEADER_OPS_FIELDS: readonly (keyof HeaderOpsConfig)[] = [
  "add",
  "set",
  "delete",
  "replace",
];

const REPLACEMENT_FIELDS: readonly (keyof ReplacementConfig)[] = [
  "search",
  "search_regexp",
  "replace",
];

/** `add` and `set`: field name → values (each written as text). */
function fieldValues(d: Decoder, key: "add" | "set"): Record<string, string[]> | undefined {
  const raw = d.rawObject(key);
  if (!raw) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!Array.isArray(v)) {
      throw new ConfigError("invalid_config", `${d.at(key)}.${k}: must be array`);
    }
    out[k] = v.map((s) => String(s));
  }
  return out;
}

function replacement(d: Decoder): ReplacementConfig {
  d.fields(REPLACEMENT_FIELDS);
  const out: ReplacementConfig = {};
  const { search, search_regexp: re, replace } = d.raw;
  // an empty or non-text search is no search, as Caddy's zero value
  if (typeof search === "string" && search !== "") out.search = search;
  if (typeof re === "string" && re !== "") {
    goRegExp(re, "g");
    out.search_regexp = re;
  }
  if (replace !== undefined && replace !== null) out.replace = String(replace);
  return out;
}

/**
 * Decodes header operations (`add`, `set`, `delete`, `replace`; regular expressions are
 * compiled to check them).
 *
 * @example
 * ```ts
 * import { Decoder } from "../../../config/decode.ts";
 * import { decodeHeaderOps } from "./config.ts";
 * decodeHeaderOps(new Decoder({ set: { "X-Id": ["1"] } }, "headers.request")).set; // { "X-Id": ["1"] }
 * ```
 */
export function decodeHeaderOps(d: Decoder): HeaderOpsConfig {
  d.fields(HEADER_OPS_FIELDS);
  const out: HeaderOpsConfig = {};
  const add = fieldValues(d, "add");
  if (add) out.add = add;
  const set = fieldValues(d, "set");
  if (set) out.set = set;
  const del = d.strings("delete");
  if (del) out.delete = del;
  const replace = d.rawObject("replace");
  if (replace) {
    out.replace = {};
    for (const [field, list] of Object.entries(replace)) {
      const at = `${d.at("replace")}.${field}`;
      if (!Array.isArray(list)) throw new ConfigError("invalid_config", `${at}: must be array`);
      out.replace[field] = list.map((r) => replacement(Decoder.of(r, at)));
    }
  }
  return out;
}

/**
 * Decodes response header operations: the operations, `deferred` and `require`. `where` is
 * the path of the object holding them, which names a mistyped `deferred`.
 *
 * @example
 * ```ts
 * import { Decoder } from "../../../config/decode.ts";
 * import { decodeRespHeaderOps } from "./config.ts";
 * const d = new Decoder({ delete: ["Server"], deferred: true }, "headers.response");
 * decodeRespHeaderOps(d, "headers").deferred; // true
 * ```
 */
export function decodeRespHeaderOps(d: Decoder, where: string): RespHeaderOpsConfig {
  const { deferred: _deferred, require, ...ops } = d.raw;
  const out: RespHeaderOpsConfig = decodeHeaderOps(new Decoder(ops, d.path));
  const deferred = new Decoder(d.raw, where).bool("deferred");
  if (deferred !== undefined) out.deferred = deferred;
  if (require) out.require = decodeResponseMatcher(new Decoder(require as Raw, d.at("require")));
  return out;
}

/**
 * Decodes and checks a `headers` config.
 *
 * @example
 * ```ts
 * import { decodeHeaders } from "./config.ts";
 * decodeHeaders({ handler: "headers", response: { set: { "X-Id": ["1"] } } }).response?.set;
 * ```
 */
export function decodeHeaders(raw: Raw): HeadersConfig {
  const d = new Decoder(raw, "http.handlers.headers").fields(HEADERS_FIELDS);
  const out: HeadersConfig = { handler: "headers" };
  const request = d.object("request");
  if (request) out.request = decodeHeaderOps(request);
  const response = d.object("response");
  if (response) out.response = decodeRespHeaderOps(response, d.path);
  return out;
}
