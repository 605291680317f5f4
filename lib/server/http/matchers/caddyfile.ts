/**
 * Gatehousefile syntax of the request matchers (`@name <matcher> <args>` and inside `not`):
 * `host`, `path`, `path_regexp`, `method`, `query`, `header`, `header_regexp`, `protocol`,
 * `remote_ip`, `client_ip`, `vars`, `vars_regexp`, `not`, `expression`, `tls`,
 * `url_pattern`, `file`. Repeated matchers of one name merge, as in Caddy. Each makes its
 * matcher's config type; {@linkcode syntax} is the set the matchers' table names.
 *
 * ```
 * @name file [<files...>] { root <path>; try_files <files...>; try_policy <p>; split_path <delims...> }
 * ```
 *
 * @module
 */
import { didYouMean, Dispenser, MATCHER_NAME_CONTEXT_KEY } from "../../caddyfile/dispenser.ts";
import { cloneToken, isQuoted, type Token } from "../../caddyfile/lexer.ts";
import { getSyntax, syntaxNames, type SyntaxSet } from "../../caddyfile/registry.ts";
import { MAX_NESTING } from "../../caddyfile/parser.ts";
import type { MatcherSet } from "../../caddyfile/types.ts";
import { canonicalHeaderKey } from "../../caddyfile/values.ts";
import type { ExpressionMatcherConfig } from "./expression.ts";
import type { FileMatcherConfig, TryPolicy } from "./file.ts";
import type { HeaderMatcherConfig } from "./header.ts";
import type { HeaderRegexpMatcherConfig } from "./header_regexp.ts";
import type { NotMatcherConfig } from "./not.ts";
import type { PathRegexpMatcherConfig } from "./path_regexp.ts";
import type { ProtocolMatcherConfig } from "./protocol.ts";
import type { QueryMatcherConfig } from "./query.ts";
import type { ClientIPMatcherConfig } from "./remote_ip.ts";
import type { URLPatternMatcherConfig } from "./url_pattern.ts";
import type { VarsMatcherConfig, VarsRegexpMatcherConfig } from "./vars.ts";

const matcherName = (d: Dispenser) => (d.getContext(MATCHER_NAME_CONTEXT_KEY) as string) ?? "";

/** `host`, `path`, `method`: a list of values (lines merge). */
export function listMatcher(kind: string): (d: Dispenser) => string[] {
  return (d) => {
    const out: string[] = [];
    while (d.next()) {
      out.push(...d.remainingArgs());
      if (d.nextBlock(0)) throw d.err(`malformed ${kind} matcher: blocks are not supported`);
    }
    return out;
  };
}

/** `query key=value ...`. */
export function queryMatcher(d: Dispenser): QueryMatcherConfig {
  const out: QueryMatcherConfig = {};
  while (d.next()) {
    for (const q of d.remainingArgs()) {
      if (q === "") continue;
      const eq = q.indexOf("=");
      if (eq < 0) {
        throw d.err(`malformed query matcher token: ${d.val()}; must be in param=val format`);
      }
      (out[q.slice(0, eq)] ??= []).push(q.slice(eq + 1));
    }
    if (d.nextBlock(0)) throw d.err("malformed query matcher: blocks are not supported");
  }
  return out;
}

/** `header <field> <value>` / `header !<field>` (field absent). */
export function headerMatcher(
  d: Dispenser,
  out: HeaderMatcherConfig = {},
): HeaderMatcherConfig {
  while (d.next()) {
    const a = d.args(1);
    if (!a) throw d.err("malformed header matcher: expected field");
    let field = a[0];
    if (field.startsWith("!")) {
      if (field.length === 1) {
        throw d.err("malformed header matcher: must have field name following ! character");
      }
      field = field.slice(1);
      out[field] = null;
      if (d.nextArg()) {
        throw d.err("malformed header matcher: null matching headers cannot have a field value");
      }
    } else {
      if (!d.nextArg()) throw d.err("malformed header matcher: expected both field and value");
      const key = canonicalHeaderKey(field);
      out[key] = [...(out[key] ?? []), d.val()];
    }
    if (d.nextBlock(0)) throw d.err("malformed header matcher: blocks are not supported");
  }
  return out;
}

/** `header_regexp [<name>] <field> <regexp>` and `vars_regexp` (same shape). */
export function fieldRegexpMatcher(kind: "header_regexp" | "vars_regexp") {
  return (d: Dispenser): HeaderRegexpMatcherConfig & VarsRegexpMatcherConfig => {
    const out: HeaderRegexpMatcherConfig & VarsRegexpMatcherConfig = {};
    while (d.next()) {
      const two = d.args(2);
      if (!two) throw d.argErr();
      let name = "", field: string, val: string;
      const third = d.args(1);
      if (third) [name, field, val] = [two[0], two[1], third[0]];
      else [field, val] = two;
      if (name === "") name = matcherName(d);
      if (kind === "header_regexp" && out[field]) {
        throw d.err(
          `header_regexp matcher can only be used once per named matcher, per header field: ${field}`,
        );
      }
      out[field] = name ? { name, pattern: val } : { pattern: val };
      if (d.nextBlock(0)) throw d.err(`malformed ${kind} matcher: blocks are not supported`);
    }
    return out;
  };
}

/** `path_regexp [<name>] <regexp>`. */
export function pathRegexpMatcher(d: Dispenser): PathRegexpMatcherConfig {
  let pattern = "", name = "";
  while (d.next()) {
    if (pattern !== "") throw d.err("regular expression can only be used once per named matcher");
    const args = d.remainingArgs();
    if (args.length === 1) pattern = args[0];
    else if (args.length === 2) [name, pattern] = args;
    else throw d.argErr();
    if (name === "") name = matcherName(d);
    if (d.nextBlock(0)) throw d.err("malformed path_regexp matcher: blocks are not supported");
  }
  return name ? { name, pattern } : { pattern };
}

/** `protocol http|https|grpc|http/<version>`. */
export function protocolMatcher(d: Dispenser): ProtocolMatcherConfig {
  let proto = "";
  while (d.next()) {
    const a = d.args(1);
    if (!a) throw d.err("expected exactly one protocol");
    proto = a[0];
  }
  return proto;
}

const PRIVATE_RANGES = [
  "192.168.0.0/16",
  "172.16.0.0/12",
  "10.0.0.0/8",
  "127.0.0.1/8",
  "fd00::/8",
  "::1",
];

/** `remote_ip` / `client_ip <ranges...>` (`private_ranges` expands). */
export function ipMatcher(kind: "remote_ip" | "client_ip") {
  return (d: Dispenser): ClientIPMatcherConfig => {
    const ranges: string[] = [];
    while (d.next()) {
      while (d.nextArg()) {
        if (kind === "remote_ip" && d.val() === "forwarded") {
          throw d.err(
            "the 'forwarded' option is no longer supported; use the 'client_ip' matcher instead",
          );
        }
        if (d.val() === "private_ranges") ranges.push(...PRIVATE_RANGES);
        else ranges.push(d.val());
      }
      if (d.nextBlock(0)) throw d.err(`malformed ${kind} matcher: blocks are not supported`);
    }
    return ranges.length > 0 ? { ranges } : {};
  };
}

/** `vars <name> <values...>`. */
export function varsMatcher(d: Dispenser): VarsMatcherConfig {
  const out: VarsMatcherConfig = {};
  while (d.next()) {
    const a = d.args(1);
    if (!a) throw d.err("malformed vars matcher: expected field name");
    const vals = d.remainingArgs();
    if (vals.length === 0) {
      throw d.err("malformed vars matcher: expected at least one value to match against");
    }
    out[a[0]] = [...(out[a[0]] ?? []), ...vals];
    if (d.nextBlock(0)) throw d.err("malformed vars matcher: blocks are not supported");
  }
  return out;
}

/** `expression <CEL>`: one argument, or several kept with their quotes. */
export function expressionMatcher(d: Dispenser): ExpressionMatcherConfig {
  d.next();
  if (d.countRemainingArgs() > 1) return d.remainingArgsRaw().join(" ");
  if (!d.nextArg()) throw d.argErr();
  const expr = d.val();
  const name = matcherName(d);
  return name ? { expr, name } : expr;
}

/**
 * `http.matchers.tls` (Caddy's `MatchTLS`): the request came over TLS, with the handshake
 * complete or not. Only its syntax is here: no module of this server reads it.
 */
export type TLSMatcherConfig = {
  /** The TLS handshake has completed (false: 0-RTT early data). */
  handshake_complete?: boolean;
};

/** `tls [early_data]`. */
export function tlsMatcher(d: Dispenser): TLSMatcherConfig {
  const out: TLSMatcherConfig = {};
  while (d.next()) {
    if (d.nextArg()) {
      if (d.val() !== "early_data") {
        throw d.unknownSubdirective(["early_data"], "unrecognized option '%s'");
      }
      out.handshake_complete = false;
    }
    if (d.nextArg()) throw d.argErr();
    if (d.nextBlock(0)) throw d.err("malformed tls matcher: blocks are not supported yet");
  }
  return out;
}

/** `url_pattern <pattern> { base_url <url>; ignore_case }`. */
export function urlPatternMatcher(d: Dispenser): URLPatternMatcherConfig {
  const out: URLPatternMatcherConfig = {};
  while (d.next()) {
    const a = d.args(1);
    if (!a) throw d.err("expected exactly one URL pattern");
    if (a[0] !== "") out.pattern = a[0];
    for (const n = d.nesting(); d.nextBlock(n);) {
      if (d.val() === "base_url") {
        const b = d.args(1);
        if (!b) throw d.argErr();
        out.base_url = b[0];
      } else if (d.val() === "ignore_case") {
        if (d.nextArg()) throw d.argErr();
        out.ignore_case = true;
      } else {
        throw d.unknownSubdirective(
          ["base_url", "ignore_case"],
          "unrecognized url_pattern option '%s'",
        );
      }
    }
  }
  return out;
}

/**
 * A matcher set written inline (inside `not`, `handle_response`, ...): matcher names with
 * their arguments or blocks; a quoted token is an expression.
 */
export function parseNestedMatcherSet(d: Dispenser): MatcherSet {
  if (nestedDepth >= MAX_NESTING) {
    throw d.err(`matchers are nested too deeply (more than ${MAX_NESTING} levels)`);
  }
  nestedDepth++;
  try {
    return nestedMatcherSet(d);
  } finally {
    nestedDepth--;
  }
}

let nestedDepth = 0;

function nestedMatcherSet(d: Dispenser): MatcherSet {
  const byName = new Map<string, Token[]>();
  for (const n = d.nesting(); d.nextArg() || d.nextBlock(n);) {
    if (isQuoted(d.token())) {
      const exprToken = { ...cloneToken(d.token()), text: "expression" };
      byName.set("expression", [...(byName.get("expression") ?? []), exprToken, d.token()]);
      continue;
    }
    const name = d.val();
    byName.set(name, [...(byName.get(name) ?? []), ...d.nextSegment()]);
  }
  const set: MatcherSet = {};
  for (const [name, tokens] of byName) {
    const fn = getSyntax(`http.matchers.${name}`);
    if (!fn) {
      throw d.err(
        `getting matcher module '${name}': module not registered: http.matchers.${name}${
          didYouMean(name, syntaxNames("http.matchers"))
        }`,
      );
    }
    set[name] = fn(new Dispenser(tokens));
  }
  return set;
}

/** `not <matcher...>` / `not { ... }`: each line or block is one negated set. */
export function notMatcher(d: Dispenser): NotMatcherConfig {
  const sets: MatcherSet[] = [];
  while (d.next()) sets.push(parseNestedMatcherSet(d));
  return sets;
}

/** `file [<files...>] { root <path>; try_files <files...>; try_policy <p>; split_path <delims...> }`. */
export function fileMatcher(d: Dispenser): FileMatcherConfig {
  const m: FileMatcherConfig = {};
  const addFiles = (v: string[]) => {
    const all = [...(m.try_files ?? []), ...v];
    if (all.length > 0) m.try_files = all;
  };
  while (d.next()) {
    addFiles(d.remainingArgs());
    for (const n = d.nesting(); d.nextBlock(n);) {
      switch (d.val()) {
        case "root":
          if (!d.nextArg()) throw d.argErr();
          m.root = d.val();
          break;
        case "try_files":
          addFiles(d.remainingArgs());
          if (!m.try_files?.length) throw d.argErr();
          break;
        case "try_policy":
          if (!d.nextArg()) throw d.argErr();
          // written as given: the JSON decoder refuses an unknown policy by name
          m.try_policy = d.val() as TryPolicy;
          break;
        case "split_path": {
          const s = d.remainingArgs();
          if (s.length === 0) throw d.argErr();
          m.split_path = s;
          break;
        }
        default:
          throw d.unknownSubdirective(
            ["root", "try_files", "try_policy", "split_path"],
            "unrecognized subdirective: %s",
          );
      }
    }
  }
  return m;
}

/** A response matcher (`status`, `header`), as in `@name { status 5xx; header X v }`. */
export interface ResponseMatcher {
  /** Status codes (a single digit stands for its class, e.g. 5 for 5xx). */
  status_code?: number[];
  /** Header fields and values (null: the field must be absent). */
  headers?: Record<string, string[] | null>;
}

/** Parses one named response matcher into `matchers` (keyed by its name). */
export function parseNamedResponseMatcher(
  d: Dispenser,
  matchers: Map<string, ResponseMatcher>,
): void {
  d.next();
  const name = d.val();
  if (matchers.has(name)) throw d.err(`matcher is defined more than once: ${name}`);
  const m: ResponseMatcher = {};
  for (const n = d.nesting(); d.nextArg() || d.nextBlock(n);) {
    switch (d.val()) {
      case "header":
        m.headers = headerMatcher(d.newFromNextSegment(), m.headers ?? {});
        break;
      case "status": {
        m.status_code ??= [];
        const args = d.remainingArgs();
        if (args.length === 0) throw d.argErr();
        for (let a of args) {
          if (a.length === 3 && a.endsWith("xx")) a = a.slice(0, 1);
          if (!/^[+-]?\d+$/.test(a)) {
            throw d.err(
              `bad status value '${a}': strconv.Atoi: parsing ${JSON.stringify(a)}: invalid syntax`,
            );
          }
          m.status_code.push(Number(a));
        }
        break;
      }
      default:
        throw d.unknownSubdirective(["header", "status"], "unrecognized response matcher %s");
    }
  }
  if (m.status_code?.length === 0) delete m.status_code;
  if (m.headers && Object.keys(m.headers).length === 0) delete m.headers;
  matchers.set(name, m);
}

/** The Gatehousefile syntax of every request matcher (`http.matchers.*`). */
export const syntax: SyntaxSet = {
  modules: {
    "http.matchers.file": fileMatcher,
    "http.matchers.host": listMatcher("host"),
    "http.matchers.path": listMatcher("path"),
    "http.matchers.method": listMatcher("method"),
    "http.matchers.path_regexp": pathRegexpMatcher,
    "http.matchers.query": queryMatcher,
    "http.matchers.header": headerMatcher,
    "http.matchers.header_regexp": fieldRegexpMatcher("header_regexp"),
    "http.matchers.vars_regexp": fieldRegexpMatcher("vars_regexp"),
    "http.matchers.protocol": protocolMatcher,
    "http.matchers.remote_ip": ipMatcher("remote_ip"),
    "http.matchers.client_ip": ipMatcher("client_ip"),
    "http.matchers.vars": varsMatcher,
    "http.matchers.not": notMatcher,
    "http.matchers.expression": expressionMatcher,
    "http.matchers.tls": tlsMatcher,
    "http.matchers.url_pattern": urlPatternMatcher,
  },
};
