/**
 * The config of `http.handlers.rewrite`, field by field as Caddy's `Rewrite`,
 * `substrReplacer`, `regexReplacer` and `queryOps` (`modules/caddyhttp/rewrite/rewrite.go`),
 * and its decoder. The JSON decoder, the `rewrite`, `uri`, `method` and `handle_path`
 * directives (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { goRegExp } from "../../../config/regexp.ts";

/** A substring replacement in the URI path and query. */
export type SubstringReplacement = {
  /** The substring to find (placeholders allowed). */
  find?: string;
  /** The substring to replace it with (placeholders allowed). */
  replace?: string;
  /** Most replacements in the path, and in the query; 0 or less for no limit (the default). */
  limit?: number;
};

/** A regular expression replacement in the URI path. */
export type RegexpReplacement = {
  /** The regular expression to search for (Go syntax). */
  find?: string;
  /** The replacement (placeholders and `${1}`, `${name}` capture groups allowed). */
  replace?: string;
};

/** One key and value of a query operation. */
export type QueryArgument = {
  /** A key of the query (keys may appear more than once; placeholders allowed). */
  key?: string;
  /** For `add` and `set` the value; for `rename` the new key (placeholders allowed). */
  val?: string;
};

/** A replacement in the values of a query key. */
export type QueryReplacement = {
  /** The key whose values change (placeholders allowed); `*` (the default) for every key. */
  key?: string;
  /** The substring to search for (placeholders allowed, unknown ones kept). */
  search?: string;
  /** The regular expression to search with (Go syntax). */
  search_regexp?: string;
  /** The string with which to replace matches (placeholders allowed, unknown ones kept). */
  replace?: string;
};

/** Operations on the query, applied in this order. */
export type QueryOpsConfig = {
  /** Renames a key from `key` to `val`, keeping its values. */
  rename?: QueryArgument[];
  /** Sets a key to the value, replacing its values. */
  set?: QueryArgument[];
  /** Adds a value to a key, keeping those it has. */
  add?: QueryArgument[];
  /** Replaces in the values of a key. */
  replace?: QueryReplacement[];
  /** Deletes keys (placeholders allowed). */
  delete?: string[];
};

/** `http.handlers.rewrite`. */
export type RewriteConfig = {
  /** The module name. */
  handler: "rewrite";
  /** Changes the request's method (placeholders allowed). */
  method?: string;
  /**
   * Changes the request's URI: only the parts given change (`/foo` the path, `?a=b` the
   * query, `/foo?a=b` both; `?` clears the query); placeholders allowed, their values
   * escaped in the query. A query a placeholder's value brings into the path replaces the
   * query only after an empty `?` (`/x{v}?`), its braces escaped (never expanded).
   */
  uri?: string;
  /** Strips this prefix from the path (placeholders allowed; compared without case). */
  strip_path_prefix?: string;
  /** Strips this suffix from the path (placeholders allowed; compared without case). */
  strip_path_suffix?: string;
  /** Substring replacements in the (escaped) path and the raw query. */
  uri_substring?: SubstringReplacement[];
  /** Regular expression replacements in the path. */
  path_regexp?: RegexpReplacement[];
  /** Operations on the query. */
  query?: QueryOpsConfig;
};

/** The fields of {@linkcode RewriteConfig}. */
export const REWRITE_FIELDS: readonly (keyof RewriteConfig)[] = [
  "handler",
  "method",
  "uri",
  "strip_path_prefix",
  "strip_path_suffix",
  "uri_substring",
  "path_regexp",
  "query",
];

const QUERY_FIELDS: readonly (keyof QueryOpsConfig)[] = [
  "rename",
  "set",
  "add",
  "replace",
  "delete",
];

/** A value written as text, as Go's string fields take it; null and absent stay absent. */
function text(v: unknown): string | undefined {
  return v === undefined || v === null ? undefined : String(v);
}

function substring(o: Decoder): SubstringReplacement {
  const out: SubstringReplacement = {};
  const find = text(o.value("find"));
  if (find !== undefined) out.find = find;
  const replace = text(o.value("replace"));
  if (replace !== undefined) out.replace = replace;
  const limit = o.value("limit");
  if (typeof limit === "number") out.limit = limit;
  return out;
}

function regexp(o: Decoder): RegexpReplacement {
  const out: RegexpReplacement = {};
  const find = text(o.value("find"));
  goRegExp(find ?? "", "g");
  if (find !== undefined) out.find = find;
  const replace = text(o.value("replace"));
  if (replace !== undefined) out.replace = replace;
  return out;
}

/** A query argument; `rename` keeps a null `val` as the text "null", `set` and `add` drop it. */
function argument(rename: boolean) {
  return (o: Decoder): QueryArgument => {
    const out: QueryArgument = {};
    if (o.value("key") !== undefined) out.key = String(o.value("key"));
    const val = rename && o.value("val") !== undefined
      ? String(o.value("val"))
      : text(o.value("val"));
    if (val !== undefined) out.val = val;
    return out;
  };
}

function queryReplacement(o: Decoder): QueryReplacement {
  const out: QueryReplacement = {};
  const key = text(o.value("key"));
  if (key !== undefined) out.key = key;
  const search = o.value("search");
  if (typeof search === "string") out.search = search;
  const re = o.value("search_regexp");
  if (typeof re === "string") {
    goRegExp(re, "g");
    out.search_regexp = re;
  }
  const replace = text(o.value("replace"));
  if (replace !== undefined) out.replace = replace;
  return out;
}

/** The entries of list `key`, each an object named by the list (`<path>.<key>`). */
function entries<T>(d: Decoder, key: string, decode: (o: Decoder) => T): T[] | undefined {
  return d.array(key)?.map((e) => decode(Decoder.of(e, d.at(key))));
}

function decodeQuery(d: Decoder): QueryOpsConfig {
  d.fields(QUERY_FIELDS);
  const out: QueryOpsConfig = {};
  const rename = entries(d, "rename", argument(true));
  if (rename) out.rename = rename;
  const set = entries(d, "set", argument(false));
  if (set) out.set = set;
  const add = entries(d, "add", argument(false));
  if (add) out.add = add;
  const replace = entries(d, "replace", queryReplacement);
  if (replace) out.replace = replace;
  if (d.value("delete") !== undefined) out.delete = d.value("delete") as string[];
  return out;
}

/**
 * Decodes and checks a `rewrite` config (types, known fields, the regular expressions).
 *
 * @example
 * ```ts
 * import { decodeRewrite } from "./config.ts";
 * decodeRewrite({ handler: "rewrite", strip_path_prefix: "/api" }).strip_path_prefix; // "/api"
 * ```
 */
export function decodeRewrite(raw: Raw): RewriteConfig {
  const d = new Decoder(raw, "http.handlers.rewrite").fields(REWRITE_FIELDS);
  const out: RewriteConfig = { handler: "rewrite" };
  for (const k of ["method", "uri", "strip_path_prefix", "strip_path_suffix"] as const) {
    const v = d.string(k);
    if (v !== undefined) out[k] = v;
  }
  const substrings = entries(d, "uri_substring", substring);
  if (substrings) out.uri_substring = substrings;
  const regexps = entries(d, "path_regexp", regexp);
  if (regexps) out.path_regexp = regexps;
  const query = d.object("query");
  if (query) out.query = decodeQuery(query);
  return out;
}
