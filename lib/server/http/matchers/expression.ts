/**
 * `expression` matcher: a documented subset of Caddy's CEL expressions.
 *
 * Supported: literals (`'str'`, `"str"`, `` `raw` ``, numbers, `true`, `false`, `null`, lists `[..]`, maps
 * `{'k': v}`), placeholders (`{http.request.uri.path}`, as strings;
 * `{http.reverse_proxy.is_transport_error}` as a boolean), `!`, `&&`, `||`, `==`,
 * `!=`, `<`, `<=`, `>`, `>=`, `in` (list element or map key), `+` (strings and numbers),
 * parentheses, string methods `startsWith`, `endsWith`, `contains`, `matches` (regexp),
 * `size()`, `lowerAscii()`, `upperAscii()`, and the matcher functions `path(...)`,
 * `host(...)`, `method(...)`, `header({...})`, `header_regexp([name,] field, re)`,
 * `path_regexp([name,] re)`, `query({...})`, `remote_ip(...)`, `client_ip(...)`,
 * `protocol(...)`, `vars({...})`, `file(...)` (file names, or `{'try_files': [...], 'root': ...}`), `url_pattern(pattern[, base])`. Config: a string, or `{"expr": "...", "name": "..."}`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { ConfigError } from "../../config/error.ts";
import type { RequestMatcher } from "../handler.ts";
import { goRegExp } from "../../config/regexp.ts";
import { getterFor } from "../replacer.ts";
import { loadMatcher } from "../routes.ts";
import { stringValue } from "./values.ts";

type Value = string | number | boolean | null | Value[] | { [k: string]: Value };
type Eval = (c: RequestContext) => Value;

type Tok = { t: "str" | "num" | "id" | "ph" | "op"; v: string };

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === "`") {
      // a backquoted string is raw: no escapes (as the Caddyfile writes CEL strings)
      const end = src.indexOf("`", i + 1);
      if (end < 0) throw new ConfigError("invalid_config", `expression: unterminated string`);
      out.push({ t: "str", v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      let s = "";
      while (j < src.length && src[j] !== ch) {
        if (src[j] === "\\" && j + 1 < src.length) {
          const n = src[++j];
          s += n === "n" ? "\n" : n === "t" ? "\t" : n;
        } else s += src[j];
        j++;
      }
      if (j >= src.length) {
        throw new ConfigError("invalid_config", `expression: unterminated string`);
      }
      out.push({ t: "str", v: s });
      i = j + 1;
      continue;
    }
    const ph = /^\{([a-zA-Z0-9_.\-/]+)\}/.exec(src.slice(i));
    if (ph) {
      out.push({ t: "ph", v: ph[1] });
      i += ph[0].length;
      continue;
    }
    const num = /^\d+(\.\d+)?/.exec(src.slice(i));
    if (num) {
      out.push({ t: "num", v: num[0] });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      out.push({ t: "id", v: id[0] });
      i += id[0].length;
      continue;
    }
    const op = /^(==|!=|<=|>=|&&|\|\||[!<>+(),.[\]{}:])/.exec(src.slice(i));
    if (!op) throw new ConfigError("invalid_config", `expression: unexpected "${ch}"`);
    out.push({ t: "op", v: op[0] });
    i += op[0].length;
  }
  return out;
}

const truthy = (v: Value) => v === true;

/** Placeholders whose value is a boolean (the others are strings). */
const BOOLEAN_PLACEHOLDERS = new Set(["http.reverse_proxy.is_transport_error"]);
const str = (v: Value): string =>
  typeof v === "string"
    ? v
    : v === null
    ? ""
    : typeof v === "object"
    ? JSON.stringify(v)
    : String(v);

function compare(a: Value, b: Value, op: string): boolean {
  if (op === "==") {
    return JSON.stringify(a) === JSON.stringify(b) || (typeof a !== typeof b && str(a) === str(b));
  }
  if (op === "!=") return !compare(a, b, "==");
  const x = typeof a === "number" && typeof b === "number" ? a : str(a);
  const y = typeof a === "number" && typeof b === "number" ? b : str(b);
  return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
}

class Parser {
  #toks: Tok[];
  #i = 0;
  #pending: Promise<void>[] = [];
  constructor(toks: Tok[], private ctx: ProvisionContext) {
    this.#toks = toks;
  }
  #peek(v?: string): boolean {
    const t = this.#toks[this.#i];
    return !!t && (v === undefined || (t.t === "op" && t.v === v) || (t.t === "id" && t.v === v));
  }
  #eat(v: string): void {
    if (!this.#peek(v)) {
      throw new ConfigError(
        "invalid_config",
        `expression: expected "${v}" at token ${this.#i}`,
      );
    }
    this.#i++;
  }
  async parse(): Promise<Eval> {
    const e = this.#or();
    if (this.#i < this.#toks.length) {
      throw new ConfigError(
        "invalid_config",
        `expression: unexpected "${this.#toks[this.#i].v}"`,
      );
    }
    await Promise.all(this.#pending);
    return e;
  }
  #or(): Eval {
    let l = this.#and();
    while (this.#peek("||")) {
      this.#i++;
      const a = l;
      const b = this.#and();
      l = (c) => truthy(a(c)) || truthy(b(c));
    }
    return l;
  }
  #and(): Eval {
    let l = this.#unary();
    while (this.#peek("&&")) {
      this.#i++;
      const a = l;
      const b = this.#unary();
      l = (c) => truthy(a(c)) && truthy(b(c));
    }
    return l;
  }
  #unary(): Eval {
    if (this.#peek("!")) {
      this.#i++;
      const e = this.#unary();
      return (c) => !truthy(e(c));
    }
    return this.#comparison();
  }
  #comparison(): Eval {
    const l = this.#additive();
    const t = this.#toks[this.#i];
    if (
      t &&
      ((t.t === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.v)) ||
        (t.t === "id" && t.v === "in"))
    ) {
      this.#i++;
      const r = this.#additive();
      if (t.v === "in") {
        return (c) => {
          const hay = r(c);
          const needle = l(c);
          if (Array.isArray(hay)) return hay.some((x) => compare(x, needle, "=="));
          if (hay && typeof hay === "object") return Object.hasOwn(hay, str(needle));
          return false;
        };
      }
      return (c) => compare(l(c), r(c), t.v);
    }
    return l;
  }
  #additive(): Eval {
    let l = this.#postfix();
    while (this.#peek("+")) {
      this.#i++;
      const a = l;
      const b = this.#postfix();
      l = (c) => {
        const x = a(c);
        const y = b(c);
        return typeof x === "number" && typeof y === "number" ? x + y : str(x) + str(y);
      };
    }
    return l;
  }
  #postfix(): Eval {
    let e = this.#primary();
    while (this.#peek(".")) {
      this.#i++;
      const name = this.#toks[this.#i++]?.v;
      this.#eat("(");
      const args = this.#args(")");
      const target = e;
      switch (name) {
        case "startsWith":
          e = (c) => str(target(c)).startsWith(str(args[0](c)));
          break;
        case "endsWith":
          e = (c) => str(target(c)).endsWith(str(args[0](c)));
          break;
        case "contains":
          e = (c) => str(target(c)).includes(str(args[0](c)));
          break;
        case "matches": {
          const cache = new Map<string, RegExp>();
          e = (c) => {
            const p = str(args[0](c));
            let re = cache.get(p);
            if (!re) cache.set(p, re = goRegExp(p));
            return re.test(str(target(c)));
          };
          break;
        }
        case "size":
          e = (c) => {
            const v = target(c);
            return Array.isArray(v)
              ? v.length
              : v && typeof v === "object"
              ? Object.keys(v).length
              : str(v).length;
          };
          break;
        case "lowerAscii":
          e = (c) => str(target(c)).toLowerCase();
          break;
        case "upperAscii":
          e = (c) => str(target(c)).toUpperCase();
          break;
        default:
          throw new ConfigError("invalid_config", `expression: unknown method ${name}`);
      }
    }
    return e;
  }
  #args(close: string): Eval[] {
    const args: Eval[] = [];
    while (!this.#peek(close)) {
      args.push(this.#or());
      if (!this.#peek(close)) this.#eat(",");
    }
    this.#eat(close);
    return args;
  }
  #primary(): Eval {
    const t = this.#toks[this.#i++];
    if (!t) throw new ConfigError("invalid_config", "expression: unexpected end");
    if (t.t === "str") return () => t.v;
    if (t.t === "num") return () => Number(t.v);
    if (t.t === "ph") {
      const g = getterFor(t.v);
      // a flag is a boolean in CEL, as Caddy's replacer holds it (unset: false)
      if (BOOLEAN_PLACEHOLDERS.has(t.v)) return (c) => g(c) === "true";
      return (c) => g(c) ?? null;
    }
    if (t.t === "op" && t.v === "(") {
      const e = this.#or();
      this.#eat(")");
      return e;
    }
    if (t.t === "op" && t.v === "[") {
      const items = this.#args("]");
      return (c) => items.map((i) => i(c));
    }
    if (t.t === "op" && t.v === "{") {
      const entries: [Eval, Eval][] = [];
      while (!this.#peek("}")) {
        const k = this.#or();
        this.#eat(":");
        entries.push([k, this.#or()]);
        if (!this.#peek("}")) this.#eat(",");
      }
      this.#eat("}");
      return (c) => Object.fromEntries(entries.map(([k, v]) => [str(k(c)), v(c)]));
    }
    if (t.t === "id") {
      if (t.v === "true") return () => true;
      if (t.v === "false") return () => false;
      if (t.v === "null") return () => null;
      if (this.#peek("(")) {
        this.#i++;
        const args = this.#args(")");
        return this.#matcherCall(t.v, args);
      }
    }
    throw new ConfigError("invalid_config", `expression: unexpected "${t.v}"`);
  }
  #matcherCall(name: string, args: Eval[]): Eval {
    // Matcher arguments are constants: evaluate them once with no request.
    const vals = args.map((a) => a({} as RequestContext));
    const listOf = (v: Value[]) => v.map(str);
    const mapOfLists = (v: Value) =>
      Object.fromEntries(
        Object.entries(v as Record<string, Value>).map((
          [k, x],
        ) => [k, Array.isArray(x) ? listOf(x) : [str(x)]]),
      );
    let cfg: unknown;
    switch (name) {
      case "path":
      case "host":
      case "method":
        cfg = listOf(vals);
        break;
      case "protocol":
        cfg = str(vals[0]);
        break;
      case "remote_ip":
      case "client_ip":
        cfg = { ranges: listOf(vals) };
        break;
      case "header":
      case "query":
      case "vars":
        cfg = mapOfLists(vals[0]);
        break;
      case "path_regexp":
        cfg = vals.length > 1
          ? { name: str(vals[0]), pattern: str(vals[1]) }
          : { pattern: str(vals[0]) };
        break;
      case "header_regexp":
        cfg = vals.length > 2
          ? { [str(vals[1])]: { name: str(vals[0]), pattern: str(vals[2]) } }
          : { [str(vals[0])]: { pattern: str(vals[1]) } };
        break;
      case "url_pattern":
        cfg = vals.length > 1
          ? { pattern: str(vals[0]), base_url: str(vals[1]) }
          : { pattern: str(vals[0]) };
        break;
      case "file": {
        const first = vals[0];
        if (first !== null && typeof first === "object" && !Array.isArray(first)) {
          cfg = Object.fromEntries(
            Object.entries(first as Record<string, Value>).map((
              [k, x],
            ) => [k, Array.isArray(x) ? listOf(x) : str(x)]),
          );
        } else cfg = vals.length ? { try_files: listOf(vals) } : {};
        break;
      }
      default:
        throw new ConfigError("invalid_config", `expression: unknown function ${name}`);
    }
    let matcher: RequestMatcher | null = null;
    this.#pending.push(loadMatcher(this.ctx, name, cfg).then((m) => void (matcher = m)));
    return (c) => matcher!.match(c);
  }
}

/** Compiles an expression into a matcher. */
export async function compileExpression(
  src: string,
  ctx: ProvisionContext,
): Promise<RequestMatcher> {
  const evaluate = await new Parser(lex(src), ctx).parse();
  return { match: (c) => evaluate(c) === true };
}

/**
 * `http.matchers.expression` (Caddy's `MatchExpression`, `modules/caddyhttp/celmatcher.go`):
 * the expression, or the expression and the name its regexp functions' placeholders take
 * (`{http.regexp.<name>.N}`, as a named matcher gives it in a Caddyfile).
 */
export type ExpressionMatcherConfig = string | {
  /** The expression (the subset above). */
  expr: string;
  /** The name for placeholders. */
  name?: string;
};

/**
 * Decodes an `expression` matcher: a string, or an object whose `expr` is a string.
 *
 * @example
 * ```ts
 * import { decodeExpressionMatcher } from "./expression.ts";
 * decodeExpressionMatcher({ expr: "method('GET')", name: "get" });
 * ```
 */
export function decodeExpressionMatcher(raw: unknown): ExpressionMatcherConfig {
  const path = "http.matchers.expression";
  if (typeof raw === "string") return raw;
  const o = typeof raw === "object" && raw !== null ? raw as Record<string, unknown> : {};
  const expr = stringValue(o.expr, path);
  return typeof o.name === "string" ? { expr, name: o.name } : { expr };
}

/** Registry entry. */
export const expressionMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.expression",
  create(config, ctx) {
    const decoded = decodeExpressionMatcher(config);
    return compileExpression(typeof decoded === "string" ? decoded : decoded.expr, ctx);
  },
};
