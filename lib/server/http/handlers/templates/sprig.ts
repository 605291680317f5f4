/**
 * The sprig functions (Masterminds/sprig v3 `TxtFuncMap`, which Caddy adds to every template)
 * that templates commonly use, with sprig's argument order and conversions (`toString` prints
 * with `%v`, the arithmetic converts as spf13/cast does and answers `int64`). Which are here
 * and which are not is listed in docs/http.md; a template calling one that is not here fails
 * to parse (`function "x" not defined`).
 *
 * @module
 */
import { FuncError, GoFunc, GoInt, GoObject, GoTime, NilPtr, typeArray } from "./values.ts";
import {
  formatFloat,
  formatValue,
  quote as goQuote,
  sprintf,
  sprintValue,
} from "./gotemplate/fmt.ts";
import { cleanPath } from "./files.ts";
import { goBase, goDir } from "../../../net/path.ts";
import { formatTime, parseTime } from "./time.ts";
import { humanTime } from "./humanize.ts";
import { toGo } from "./frontmatter.ts";

type P = GoFunc["params"];
type V = GoFunc["variadic"];

const fail = (msg: string): never => {
  throw new FuncError(msg);
};

/** sprig's `strval`. */
export function strval(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  return sprintValue(v);
}

/** spf13/cast's `ToInt64` (0 for what it cannot convert). */
export function toInt64(v: unknown): bigint {
  if (typeof v === "bigint") return v;
  if (v instanceof GoInt) return v.v;
  if (typeof v === "number") return Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n;
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (typeof v === "string") {
    const s = v.replace(/\.0*$/, "");
    const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO]?[0-7]+|[1-9][0-9]*|0)$/.exec(s);
    if (!m) return 0n;
    let body = m[2];
    if (/^0[0-7]+$/.test(body)) body = "0o" + body.slice(1);
    else if (/^0[oO]/.test(body)) body = "0o" + body.slice(2);
    const n = BigInt(body);
    return m[1] === "-" ? -n : n;
  }
  return 0n;
}

/** spf13/cast's `ToFloat64`. */
export function toFloat64(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof GoInt) return Number(v.v);
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const n = Number(v);
    return v.trim() !== "" && Number.isFinite(n) ? n : 0;
  }
  return 0;
}

const i64 = (n: bigint) => new GoInt("int64", BigInt.asIntN(64, n));

/** sprig's `empty`. */
export function empty(v: unknown): boolean {
  if (v === undefined || v === null || v instanceof NilPtr) return true;
  if (typeof v === "string" || Array.isArray(v) || v instanceof Uint8Array) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (typeof v === "boolean") return !v;
  if (typeof v === "bigint") return v === 0n;
  if (v instanceof GoInt) return v.v === 0n;
  if (typeof v === "number") return v === 0;
  if (v instanceof GoObject && v.kind === "map") return v.entries().length === 0;
  return false;
}

function list(v: unknown, what: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Uint8Array) return [...v].map((b) => new GoInt("uint8", BigInt(b)));
  if (v === undefined || v === null) {
    fail("runtime error: invalid memory address or nil pointer dereference");
  }
  return fail(`Cannot ${what} on type ${kindOf(v)}`);
}

/** `reflect.Kind` names (sprig's `kindOf`). */
export function kindOf(v: unknown): string {
  if (v === undefined || v === null) return "invalid";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float64";
  if (v instanceof GoInt) return v.type;
  if (Array.isArray(v) || v instanceof Uint8Array) return "slice";
  if (v instanceof Map) return "map";
  if (v instanceof NilPtr) return "ptr";
  if (v instanceof GoFunc) return "func";
  if (v instanceof GoObject) {
    if (v.kind === "map") return "map";
    if (v.kind === "string") return "string";
    return v.goType.startsWith("*") ? "ptr" : "struct";
  }
  return "invalid";
}

function strslice(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((e) => e !== undefined && e !== null).map(strval);
  if (v === undefined || v === null) return [];
  return [strval(v)];
}

function dictOf(v: unknown): Map<string, unknown> {
  if (v instanceof Map) return v as Map<string, unknown>;
  return fail(`wrong type for value; expected map[string]interface {}; got ${kindOf(v)}`);
}

/** Go's deep equality of two template values. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "bigint" || typeof b === "bigint") return typeof a === typeof b && a === b;
  if (a instanceof GoInt && b instanceof GoInt) return a.type === b.type && a.v === b.v;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((e, i) => deepEqual(e, b[i]));
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k))) return false;
    return true;
  }
  return false;
}

/** Go's `encoding/json` of a template value (`html`: escape `<`, `>`, `&`). */
export function toJSON(v: unknown, html: boolean, indent = "", depth = 0): string {
  const nl = indent ? "\n" + indent.repeat(depth + 1) : "";
  const end = indent ? "\n" + indent.repeat(depth) : "";
  const sep = indent ? ": " : ":";
  if (depth > 100) fail("json: unsupported value: encountered a cycle");
  if (v === undefined || v === null || v instanceof NilPtr) return "null";
  if (typeof v === "string") {
    let s = JSON.stringify(v).replace(
      /[\u2028\u2029]/g,
      (c) => c === "\u2028" ? "\\u2028" : "\\u2029",
    );
    if (html) s = s.replace(/[<>&]/g, (c) => "\\u00" + c.charCodeAt(0).toString(16));
    return s;
  }
  if (typeof v === "boolean") return String(v);
  if (typeof v === "bigint") return String(v);
  if (v instanceof GoInt) return String(v.v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) fail(`json: unsupported value: ${formatValue(v, "v")}`);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-6 || a >= 1e21)) {
      return formatValue(v, "e").replace(/e([+-])0(\d)$/, "e$1$2");
    }
    return formatFloat(v, "f", -1);
  }
  if (v instanceof GoTime) {
    return JSON.stringify(formatTime(v.date, "2006-01-02T15:04:05.999999999Z07:00", v.utc));
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return "[" + v.map((e) => nl + toJSON(e, html, indent, depth + 1)).join(",") + end + "]";
  }
  if (v instanceof Map) {
    if (v.size === 0) return "{}";
    const keys = [...v.keys()].map(String).sort();
    return "{" + keys.map((k) =>
      nl + toJSON(k, html) + sep + toJSON(v.get(k), html, indent, depth + 1)
    )
      .join(",") +
      end + "}";
  }
  if (v instanceof GoObject && v.kind === "map") {
    return toJSON(new Map(v.entries()), html, indent, depth);
  }
  return "{}";
}

function goRegexp(re: string): RegExp {
  let src = re;
  let flags = "u";
  const m = /^\(\?([imsU]+)\)/.exec(src);
  if (m) {
    src = src.slice(m[0].length);
    for (const f of m[1]) if ("ims".includes(f)) flags += f;
  }
  try {
    return new RegExp(src, flags);
  } catch (e) {
    return fail(`error parsing regexp: ${(e as Error).message}`);
  }
}

function goReplacement(repl: string): string {
  return repl.replace(/\$\{(\d+)\}/g, "$$$1").replace(/\$\{(\w+)\}/g, "$$<$1>");
}

function toTime(v: unknown): GoTime {
  if (v instanceof GoTime) return v;
  const n = typeof v === "bigint" ? Number(v) : v instanceof GoInt ? Number(v.v) : null;
  if (n !== null) return new GoTime(new Date(n * 1000));
  return new GoTime(new Date());
}

const RAND = {
  alpha: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
  num: "0123456789",
  ascii: Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join(""),
};

function random(n: bigint, chars: string): string {
  const bytes = crypto.getRandomValues(new Uint32Array(Number(n < 0n ? 0n : n)));
  return [...bytes].map((b) => chars[b % chars.length]).join("");
}

async function digest(alg: string, s: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest(alg, new TextEncoder().encode(s)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function b64enc(s: string): string {
  let bin = "";
  for (const b of new TextEncoder().encode(s)) bin += String.fromCharCode(b);
  return btoa(bin);
}

function b64dec(s: string): string {
  try {
    const bin = atob(s);
    return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch (e) {
    return (e as Error).message;
  }
}

const title = (s: string) =>
  s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_, a, b) => a + b.toUpperCase());

function substr(start: bigint, end: bigint, s: string): string {
  const b = new TextEncoder().encode(s);
  const len = BigInt(b.length);
  if (start < 0n) return new TextDecoder().decode(b.subarray(0, Number(end)));
  if (end < 0n || end > len) return new TextDecoder().decode(b.subarray(Number(start)));
  if (start > end) fail(`runtime error: slice bounds out of range [${start}:${end}]`);
  return new TextDecoder().decode(b.subarray(Number(start), Number(end)));
}

function untilStep(start: bigint, stop: bigint, step: bigint): bigint[] {
  const v: bigint[] = [];
  if (stop < start) {
    if (step >= 0n) return typeArray(v, "[]int");
    for (let i = start; i > stop && v.length < 1e6; i += step) v.push(i);
    return typeArray(v, "[]int");
  }
  if (step <= 0n) return typeArray(v, "[]int");
  for (let i = start; i < stop && v.length < 1e6; i += step) v.push(i);
  return typeArray(v, "[]int");
}

function seq(...p: unknown[]): string {
  const n = p.map((x) => x as bigint);
  let [start, step, end] = [1n, 1n, 0n];
  if (n.length === 0) return "";
  if (n.length === 1) end = n[0];
  else if (n.length === 2) [start, end] = n;
  else if (n.length === 3) [start, step, end] = n;
  else return "";
  if (end < start && step > 0n && n.length < 3) step = -1n;
  if (step === 0n) return "";
  const out: string[] = [];
  if (step > 0n) {
    for (let i = start; i <= end && out.length < 1e6; i += step) {
      out.push(String(i));
    }
  } else for (let i = start; i >= end && out.length < 1e6; i += step) out.push(String(i));
  return out.join(" ");
}

const pathBase = goBase;
const pathDir = goDir;
const pathExt = (p: string) => {
  for (let i = p.length - 1; i >= 0 && p[i] !== "/"; i--) if (p[i] === ".") return p.slice(i);
  return "";
};

function dict(...kv: unknown[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (let i = 0; i < kv.length; i += 2) m.set(strval(kv[i]), i + 1 < kv.length ? kv[i + 1] : "");
  return m;
}

function round(a: unknown, p: bigint, ...opt: unknown[]): number {
  const roundOn = opt.length > 0 ? opt[0] as number : 0.5;
  const val = toFloat64(a);
  const pow = 10 ** Number(p);
  const digit = pow * val;
  const div = digit - Math.trunc(digit);
  return (div >= roundOn ? Math.ceil(digit) : Math.floor(digit)) / pow;
}

const defs: [string, P, V, (...a: never[]) => unknown][] = [
  // strings
  ["trim", ["string"], null, (s: string) => s.trim()],
  ["trimAll", ["string", "string"], null, (a: string, b: string) => trimChars(b, a)],
  ["trimall", ["string", "string"], null, (a: string, b: string) => trimChars(b, a)],
  [
    "trimPrefix",
    ["string", "string"],
    null,
    (a: string, b: string) => b.startsWith(a) ? b.slice(a.length) : b,
  ],
  [
    "trimSuffix",
    ["string", "string"],
    null,
    (a: string, b: string) => b.endsWith(a) ? b.slice(0, b.length - a.length) : b,
  ],
  ["upper", ["string"], null, (s: string) => s.toUpperCase()],
  ["lower", ["string"], null, (s: string) => s.toLowerCase()],
  ["title", ["string"], null, title],
  [
    "untitle",
    ["string"],
    null,
    (s: string) => s.replace(/(^|\s)(\S)/g, (_, a, b) => a + b.toLowerCase()),
  ],
  ["repeat", ["int", "string"], null, (n: bigint, s: string) => {
    if (n < 0n) fail("strings: negative Repeat count");
    if (BigInt(s.length) * n > 16_000_000n) fail("strings: Repeat output length overflow");
    return s.repeat(Number(n));
  }],
  ["substr", ["int", "int", "string"], null, substr],
  ["nospace", ["string"], null, (s: string) => s.replace(/\s/g, "")],
  ["trunc", ["int", "string"], null, (c: bigint, s: string) => {
    const n = BigInt(s.length);
    if (c < 0n && n + c > 0n) return s.slice(Number(n + c));
    if (c >= 0n && n > c) return s.slice(0, Number(c));
    return s;
  }],
  [
    "abbrev",
    ["int", "string"],
    null,
    (w: bigint, s: string) =>
      w < 4n || BigInt(s.length) <= w ? s : s.slice(0, Number(w) - 3) + "...",
  ],
  [
    "initials",
    ["string"],
    null,
    (s: string) => s.split(/\s+/).filter(Boolean).map((w) => w[0]).join(""),
  ],
  ["contains", ["string", "string"], null, (a: string, b: string) => b.includes(a)],
  ["hasPrefix", ["string", "string"], null, (a: string, b: string) => b.startsWith(a)],
  ["hasSuffix", ["string", "string"], null, (a: string, b: string) => b.endsWith(a)],
  [
    "quote",
    [],
    "any",
    (...a: unknown[]) =>
      a.filter((x) => x !== undefined && x !== null).map((x) => goQuote(strval(x))).join(" "),
  ],
  [
    "squote",
    [],
    "any",
    (...a: unknown[]) =>
      a.filter((x) => x !== undefined && x !== null).map((x) => `'${sprintValue(x)}'`).join(" "),
  ],
  ["cat", [], "any", (...a: unknown[]) => {
    const v = a.filter((x) => x !== undefined && x !== null);
    return sprintf(Array(v.length).fill("%v").join(" "), v);
  }],
  ["indent", ["int", "string"], null, (n: bigint, s: string) => {
    const pad = " ".repeat(Number(n < 0n ? 0n : n));
    return pad + s.replaceAll("\n", "\n" + pad);
  }],
  ["nindent", ["int", "string"], null, (n: bigint, s: string) => {
    const pad = " ".repeat(Number(n < 0n ? 0n : n));
    return "\n" + pad + s.replaceAll("\n", "\n" + pad);
  }],
  [
    "replace",
    ["string", "string", "string"],
    null,
    (o: string, n: string, s: string) => s.replaceAll(o, n),
  ],
  [
    "plural",
    ["string", "string", "int"],
    null,
    (one: string, many: string, n: bigint) => n === 1n ? one : many,
  ],
  ["sha1sum", ["string"], null, (s: string) => digest("SHA-1", s)],
  ["sha256sum", ["string"], null, (s: string) => digest("SHA-256", s)],
  ["sha512sum", ["string"], null, (s: string) => digest("SHA-512", s)],
  ["toString", ["any"], null, strval],
  [
    "atoi",
    ["string"],
    null,
    (s: string) => /^[+-]?\d+$/.test(s) ? BigInt.asIntN(64, BigInt(s)) : 0n,
  ],
  ["int", ["any"], null, (v: unknown) => toInt64(v)],
  ["int64", ["any"], null, (v: unknown) => i64(toInt64(v))],
  ["float64", ["any"], null, toFloat64],
  ["seq", [], "int", seq],
  [
    "split",
    ["string", "string"],
    null,
    (sep: string, s: string) =>
      typeArray(new Map(s.split(sep).map((p, i) => [`_${i}`, p])), "map[string]string"),
  ],
  [
    "splitList",
    ["string", "string"],
    null,
    (sep: string, s: string) => typeArray(s.split(sep), "[]string"),
  ],
  ["splitn", ["string", "int", "string"], null, (sep: string, n: bigint, s: string) => {
    const parts = s.split(sep);
    const k = Number(n);
    const out = k > 0 && parts.length > k
      ? [...parts.slice(0, k - 1), parts.slice(k - 1).join(sep)]
      : parts;
    return typeArray(new Map(out.map((p, i) => [`_${i}`, p])), "map[string]string");
  }],
  ["toStrings", ["any"], null, (v: unknown) => typeArray(strslice(v), "[]string")],
  ["until", ["int"], null, (n: bigint) => untilStep(0n, n, n < 0n ? -1n : 1n)],
  ["untilStep", ["int", "int", "int"], null, untilStep],
  ["wrap", ["int", "string"], null, (n: bigint, s: string) => wrap(s, Number(n), "\n")],
  [
    "wrapWith",
    ["int", "string", "string"],
    null,
    (n: bigint, sep: string, s: string) => wrap(s, Number(n), sep),
  ],
  ["randAlphaNum", ["int"], null, (n: bigint) => random(n, RAND.alpha + RAND.num)],
  ["randAlpha", ["int"], null, (n: bigint) => random(n, RAND.alpha)],
  ["randNumeric", ["int"], null, (n: bigint) => random(n, RAND.num)],
  ["randAscii", ["int"], null, (n: bigint) => random(n, RAND.ascii)],
  // arithmetic
  ["add1", ["any"], null, (a: unknown) => i64(toInt64(a) + 1n)],
  ["add", [], "any", (...a: unknown[]) => i64(a.reduce<bigint>((s, x) => s + toInt64(x), 0n))],
  ["sub", ["any", "any"], null, (a: unknown, b: unknown) => i64(toInt64(a) - toInt64(b))],
  ["div", ["any", "any"], null, (a: unknown, b: unknown) => {
    const d = toInt64(b);
    if (d === 0n) fail("runtime error: integer divide by zero");
    return i64(toInt64(a) / d);
  }],
  ["mod", ["any", "any"], null, (a: unknown, b: unknown) => {
    const d = toInt64(b);
    if (d === 0n) fail("runtime error: integer divide by zero");
    return i64(toInt64(a) % d);
  }],
  [
    "mul",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => i64(r.reduce<bigint>((s, x) => s * toInt64(x), toInt64(a))),
  ],
  [
    "max",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) =>
      i64(r.reduce<bigint>((m, x) => toInt64(x) > m ? toInt64(x) : m, toInt64(a))),
  ],
  [
    "biggest",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) =>
      i64(r.reduce<bigint>((m, x) => toInt64(x) > m ? toInt64(x) : m, toInt64(a))),
  ],
  [
    "min",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) =>
      i64(r.reduce<bigint>((m, x) => toInt64(x) < m ? toInt64(x) : m, toInt64(a))),
  ],
  [
    "maxf",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => Math.max(toFloat64(a), ...r.map(toFloat64)),
  ],
  [
    "minf",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => Math.min(toFloat64(a), ...r.map(toFloat64)),
  ],
  ["addf", [], "any", (...a: unknown[]) => a.reduce<number>((s, x) => s + toFloat64(x), 0)],
  ["add1f", ["any"], null, (a: unknown) => toFloat64(a) + 1],
  [
    "subf",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => r.reduce<number>((s, x) => s - toFloat64(x), toFloat64(a)),
  ],
  [
    "mulf",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => r.reduce<number>((s, x) => s * toFloat64(x), toFloat64(a)),
  ],
  [
    "divf",
    ["any"],
    "any",
    (a: unknown, ...r: unknown[]) => r.reduce<number>((s, x) => s / toFloat64(x), toFloat64(a)),
  ],
  ["floor", ["any"], null, (a: unknown) => Math.floor(toFloat64(a))],
  ["ceil", ["any"], null, (a: unknown) => Math.ceil(toFloat64(a))],
  ["round", ["any", "int"], "float64", round],
  // string lists
  ["join", ["string", "any"], null, (sep: string, v: unknown) => strslice(v).join(sep)],
  [
    "sortAlpha",
    ["any"],
    null,
    (v: unknown) => typeArray(strslice(Array.isArray(v) ? v : [v]).sort(), "[]string"),
  ],
  // defaults
  [
    "default",
    ["any"],
    "any",
    (d: unknown, ...g: unknown[]) => g.length === 0 || empty(g[0]) ? d : g[0],
  ],
  ["empty", ["any"], null, empty],
  ["coalesce", [], "any", (...v: unknown[]) => v.find((x) => !empty(x)) ?? null],
  ["all", [], "any", (...v: unknown[]) => v.every((x) => !empty(x))],
  ["any", [], "any", (...v: unknown[]) => v.some((x) => !empty(x))],
  [
    "compact",
    ["any"],
    null,
    (l: unknown) => typeArray(list(l, "compact").filter((x) => !empty(x)), "[]interface {}"),
  ],
  ["ternary", ["any", "any", "bool"], null, (t: unknown, f: unknown, v: boolean) => v ? t : f],
  ["fromJson", ["string"], null, (s: string) => {
    try {
      return toGo(JSON.parse(s));
    } catch {
      return null;
    }
  }],
  ["mustFromJson", ["string"], null, (s: string) => {
    try {
      return toGo(JSON.parse(s));
    } catch (e) {
      return fail((e as Error).message);
    }
  }],
  ["toJson", ["any"], null, (v: unknown) => toJSON(v, true)],
  ["toPrettyJson", ["any"], null, (v: unknown) => toJSON(v, true, "  ")],
  ["toRawJson", ["any"], null, (v: unknown) => toJSON(v, false)],
  // types
  ["typeOf", ["any"], null, (v: unknown) => formatValue(v, "T")],
  ["typeIs", ["string", "any"], null, (t: string, v: unknown) => formatValue(v, "T") === t],
  ["kindOf", ["any"], null, kindOf],
  ["kindIs", ["string", "any"], null, (t: string, v: unknown) => kindOf(v) === t],
  ["deepEqual", ["any", "any"], null, deepEqual],
  // OS
  [
    "expandenv",
    ["string"],
    null,
    (s: string) =>
      s.replace(/\$\{([^}]*)\}|\$([A-Za-z0-9_]+)/g, (_, a, b) => {
        try {
          return Deno.env.get(a ?? b) ?? "";
        } catch {
          return "";
        }
      }),
  ],
  // paths
  ["base", ["string"], null, pathBase],
  ["dir", ["string"], null, pathDir],
  ["clean", ["string"], null, cleanPath],
  ["ext", ["string"], null, pathExt],
  ["isAbs", ["string"], null, (p: string) => p.startsWith("/")],
  // encoding
  ["b64enc", ["string"], null, b64enc],
  ["b64dec", ["string"], null, b64dec],
  // data structures
  ["list", [], "any", (...v: unknown[]) => typeArray(v, "[]interface {}")],
  ["tuple", [], "any", (...v: unknown[]) => typeArray(v, "[]interface {}")],
  ["dict", [], "any", dict],
  [
    "get",
    ["map", "string"],
    null,
    (d: Map<string, unknown>, k: string) => d.has(k) ? d.get(k) : "",
  ],
  [
    "set",
    ["map", "string", "any"],
    null,
    (d: Map<string, unknown>, k: string, v: unknown) => d.set(k, v),
  ],
  ["unset", ["map", "string"], null, (d: Map<string, unknown>, k: string) => (d.delete(k), d)],
  ["hasKey", ["map", "string"], null, (d: Map<string, unknown>, k: string) => d.has(k)],
  [
    "keys",
    [],
    "map",
    (...ds: Map<string, unknown>[]) => typeArray(ds.flatMap((d) => [...d.keys()]), "[]string"),
  ],
  [
    "values",
    ["map"],
    null,
    (d: Map<string, unknown>) => typeArray([...d.values()], "[]interface {}"),
  ],
  [
    "pluck",
    ["string"],
    "map",
    (k: string, ...ds: Map<string, unknown>[]) =>
      typeArray(ds.filter((d) => d.has(k)).map((d) => d.get(k)), "[]interface {}"),
  ],
  [
    "pick",
    ["map"],
    "string",
    (d: Map<string, unknown>, ...ks: string[]) => new Map([...d].filter(([k]) => ks.includes(k))),
  ],
  [
    "omit",
    ["map"],
    "string",
    (d: Map<string, unknown>, ...ks: string[]) => new Map([...d].filter(([k]) => !ks.includes(k))),
  ],
  ["merge", ["map"], "any", (dst: Map<string, unknown>, ...srcs: unknown[]) => {
    for (const s of srcs) for (const [k, v] of dictOf(s)) if (!dst.has(k)) dst.set(k, v);
    return dst;
  }],
  ["mergeOverwrite", ["map"], "any", (dst: Map<string, unknown>, ...srcs: unknown[]) => {
    for (const s of srcs) for (const [k, v] of dictOf(s)) dst.set(k, v);
    return dst;
  }],
  [
    "append",
    ["any", "any"],
    null,
    (l: unknown, v: unknown) => typeArray([...list(l, "push"), v], "[]interface {}"),
  ],
  [
    "push",
    ["any", "any"],
    null,
    (l: unknown, v: unknown) => typeArray([...list(l, "push"), v], "[]interface {}"),
  ],
  [
    "prepend",
    ["any", "any"],
    null,
    (l: unknown, v: unknown) => typeArray([v, ...list(l, "prepend")], "[]interface {}"),
  ],
  ["first", ["any"], null, (l: unknown) => list(l, "find first")[0] ?? null],
  ["last", ["any"], null, (l: unknown) => list(l, "find last").at(-1) ?? null],
  ["rest", ["any"], null, (l: unknown) => {
    const v = list(l, "find rest");
    return v.length === 0 ? null : typeArray(v.slice(1), "[]interface {}");
  }],
  ["initial", ["any"], null, (l: unknown) => {
    const v = list(l, "find initial");
    return v.length === 0 ? null : typeArray(v.slice(0, -1), "[]interface {}");
  }],
  [
    "reverse",
    ["any"],
    null,
    (l: unknown) => typeArray([...list(l, "find reverse")].reverse(), "[]interface {}"),
  ],
  ["uniq", ["any"], null, (l: unknown) => {
    const out: unknown[] = [];
    for (const x of list(l, "find uniq")) if (!out.some((y) => deepEqual(x, y))) out.push(x);
    return typeArray(out, "[]interface {}");
  }],
  [
    "without",
    ["any"],
    "any",
    (l: unknown, ...o: unknown[]) =>
      typeArray(
        list(l, "find without").filter((x) => !o.some((y) => deepEqual(x, y))),
        "[]interface {}",
      ),
  ],
  [
    "has",
    ["any", "any"],
    null,
    (n: unknown, h: unknown) =>
      h === undefined || h === null ? false : list(h, "find has").some((x) => deepEqual(n, x)),
  ],
  ["slice", ["any"], "any", (l: unknown, ...ix: unknown[]) => {
    if (!Array.isArray(l)) fail(`list should be type of slice or array but ${kindOf(l)}`);
    const v = l as unknown[];
    if (v.length === 0) return null;
    const s = ix.length > 0 ? Number(toInt64(ix[0])) : 0;
    const e = ix.length > 1 ? Number(toInt64(ix[1])) : v.length;
    if (s < 0 || e > v.length || s > e) fail(`reflect: slice index out of range`);
    return typeArray(v.slice(s, e), "[]interface {}");
  }],
  [
    "concat",
    [],
    "any",
    (...ls: unknown[]) => typeArray(ls.flatMap((l) => list(l, "concat")), "[]interface {}"),
  ],
  ["uuidv4", [], null, () => crypto.randomUUID()],
  ["fail", ["string"], null, (m: string) => fail(m)],
  // regular expressions (JavaScript's engine: RE2 syntax beyond what both share differs)
  ["regexMatch", ["string", "string"], null, (re: string, s: string) => goRegexp(re).test(s)],
  [
    "regexFind",
    ["string", "string"],
    null,
    (re: string, s: string) => goRegexp(re).exec(s)?.[0] ?? "",
  ],
  ["regexFindAll", ["string", "string", "int"], null, (re: string, s: string, n: bigint) => {
    const all = [...s.matchAll(new RegExp(goRegexp(re), "gu"))].map((m) => m[0]);
    return typeArray(n < 0n ? all : all.slice(0, Number(n)), "[]string");
  }],
  [
    "regexReplaceAll",
    ["string", "string", "string"],
    null,
    (re: string, s: string, r: string) =>
      s.replace(new RegExp(goRegexp(re), "gu"), goReplacement(r)),
  ],
  [
    "regexReplaceAllLiteral",
    ["string", "string", "string"],
    null,
    (re: string, s: string, r: string) => s.replace(new RegExp(goRegexp(re), "gu"), () => r),
  ],
  ["regexSplit", ["string", "string", "int"], null, (re: string, s: string, n: bigint) => {
    const parts = s.split(new RegExp(goRegexp(re), "gu"));
    return typeArray(n < 0n ? parts : parts.slice(0, Number(n)), "[]string");
  }],
  ["regexQuoteMeta", ["string"], null, (s: string) => s.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&")],
  // dates
  ["now", [], null, () => new GoTime(new Date())],
  ["date", ["string", "any"], null, (f: string, d: unknown) => formatTime(toTime(d).date, f)],
  [
    "dateInZone",
    ["string", "any", "string"],
    null,
    (f: string, d: unknown, z: string) => formatTime(toTime(d).date, f, z === "UTC"),
  ],
  [
    "date_in_zone",
    ["string", "any", "string"],
    null,
    (f: string, d: unknown, z: string) => formatTime(toTime(d).date, f, z === "UTC"),
  ],
  ["htmlDate", ["any"], null, (d: unknown) => formatTime(toTime(d).date, "2006-01-02")],
  [
    "htmlDateInZone",
    ["any", "string"],
    null,
    (d: unknown, z: string) => formatTime(toTime(d).date, "2006-01-02", z === "UTC"),
  ],
  [
    "unixEpoch",
    ["time"],
    null,
    (d: unknown) => String(Math.floor(toTime(d).date.getTime() / 1000)),
  ],
  ["ago", ["any"], null, (d: unknown) => humanTime(toTime(d).date).replace(/ ago$/, "")],
  ["toDate", ["string", "string"], null, (f: string, s: string) => {
    try {
      return new GoTime(parseTime(f, s));
    } catch {
      return new GoTime(new Date(-62135596800000), true);
    }
  }],
  ["duration", ["any"], null, (s: unknown) => goDuration(toInt64(s))],
];

function trimChars(s: string, cut: string): string {
  const set = new Set([...cut]);
  const chars = [...s];
  let a = 0;
  let b = chars.length;
  while (a < b && set.has(chars[a])) a++;
  while (b > a && set.has(chars[b - 1])) b--;
  return chars.slice(a, b).join("");
}

function wrap(s: string, width: number, sep: string): string {
  if (width < 1) width = 1;
  const out: string[] = [];
  for (const line of s.split("\n")) {
    let cur = "";
    for (const w of line.split(" ")) {
      if (cur !== "" && cur.length + 1 + w.length > width) {
        out.push(cur);
        cur = w;
      } else cur = cur === "" ? w : cur + " " + w;
    }
    out.push(cur);
  }
  return out.join(sep);
}

function goDuration(sec: bigint): string {
  if (sec === 0n) return "0s";
  const neg = sec < 0n;
  let s = neg ? -sec : sec;
  const h = s / 3600n;
  s %= 3600n;
  const m = s / 60n;
  s %= 60n;
  const out = (h ? `${h}h` : "") + (h || m ? `${m}m` : "") + `${s}s`;
  return (neg ? "-" : "") + out;
}

/** The sprig functions that are here, by name (`mustX` variants beside the plain ones). */
export const SPRIG: ReadonlyMap<string, GoFunc> = (() => {
  const m = new Map<string, GoFunc>();
  for (const [name, params, variadic, impl] of defs) {
    m.set(name, new GoFunc(name, params, variadic, impl as (...a: unknown[]) => unknown));
  }
  for (
    const n of [
      "compact",
      "toJson",
      "toPrettyJson",
      "toRawJson",
      "first",
      "last",
      "rest",
      "initial",
      "reverse",
      "uniq",
      "without",
      "has",
      "slice",
      "append",
      "push",
      "prepend",
      "merge",
      "mergeOverwrite",
    ]
  ) {
    const f = m.get(n)!;
    const must = `must${n[0].toUpperCase()}${n.slice(1)}`;
    m.set(must, new GoFunc(must, f.params, f.variadic, f.impl));
  }
  for (
    const n of [
      "regexMatch",
      "regexFind",
      "regexFindAll",
      "regexReplaceAll",
      "regexReplaceAllLiteral",
      "regexSplit",
    ]
  ) {
    const f = m.get(n)!;
    const must = `must${n[0].toUpperCase()}${n.slice(1)}`;
    m.set(must, new GoFunc(must, f.params, f.variadic, f.impl));
  }
  m.set("hello", new GoFunc("hello", [], null, () => "Hello!"));

  return m;
})();
