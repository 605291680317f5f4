/**
 * Go's template builtins (`text/template/funcs.go`): `and or not len index slice print printf
 * println html js urlquery call eq ne lt le gt ge`, with Go's comparison rules (ints and uints
 * compare across signs, other kinds must match) and messages.
 *
 * @module
 */
import { sprint, sprintf, sprintln } from "./fmt.ts";
import {
  basicKind,
  byteLength,
  compareStrings,
  fromUtf8,
  FuncError,
  GoFunc,
  GoInt,
  GoObject,
  intValue,
  isMap,
  isTrue,
  mapEntries,
  mapZero,
  NilPtr,
  NO_FIELD,
  typeArray,
  typeName,
  utf8,
} from "./value.ts";

/** A Go error result. */
function fail(msg: string): never {
  throw new FuncError(msg);
}

/** Go's `evalArgs`: one string as is, else `fmt.Sprint` of the arguments. */
export function evalArgs(args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === "string") return args[0];
  return sprint(args);
}

/** Go's `template.HTMLEscapeString`. */
export function htmlEscape(s: string): string {
  return s.replace(
    /[\0"'&<>]/g,
    (c) =>
      ({ "\0": "\uFFFD", '"': "&#34;", "'": "&#39;", "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!,
  );
}

const PRINT = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's `template.JSEscapeString`. */
export function jsEscape(s: string): string {
  let out = "";
  for (const c of s) {
    const cp = c.codePointAt(0)!;
    switch (c) {
      case "\\":
        out += "\\\\";
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case "<":
        out += "\\u003C";
        continue;
      case ">":
        out += "\\u003E";
        continue;
      case "&":
        out += "\\u0026";
        continue;
      case "=":
        out += "\\u003D";
        continue;
    }
    if (cp < 0x20) out += "\\u00" + cp.toString(16).toUpperCase().padStart(2, "0");
    else if (cp < 0x80 || PRINT.test(c)) out += c;
    else out += "\\u" + cp.toString(16).toUpperCase().padStart(4, "0");
  }
  return out;
}

/** Go's `url.QueryEscape`. */
export function queryEscape(s: string): string {
  let out = "";
  for (const b of utf8(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === " ") out += "+";
    else out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** Go's `url.PathEscape`. */
export function pathEscape(s: string): string {
  let out = "";
  for (const b of utf8(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~$&+,:;=@]/.test(c)) out += c;
    else out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

function indexArg(index: unknown, cap: number): number {
  const x = intValue(index);
  if (x === null) {
    if (index === undefined || index === null) fail("cannot index slice/array with nil");
    fail(`cannot index slice/array with type ${typeName(index)}`);
  }
  if (x < 0n || x > BigInt(cap)) fail(`index out of range: ${x}`);
  return Number(x);
}

/** `index`. */
export function index(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) fail("index of untyped nil");
  for (const idx of indexes) {
    if (item instanceof NilPtr) fail("index of nil pointer");
    if (typeof item === "string" || Array.isArray(item) || item instanceof Uint8Array) {
      const bytes = typeof item === "string" ? utf8(item) : null;
      const len = bytes ? bytes.length : (item as unknown[]).length;
      const x = indexArg(idx, len);
      if (x === len) fail(`reflect: slice index out of range`);
      if (bytes) item = new GoInt("uint8", BigInt(bytes[x]));
      else if (item instanceof Uint8Array) item = new GoInt("uint8", BigInt(item[x]));
      else item = (item as unknown[])[x];
    } else if (isMap(item)) {
      if (idx === undefined || idx === null) fail(`value is nil; should be of type string`);
      if (typeof idx !== "string") fail(`value has type ${typeName(idx)}; should be string`);
      const v = item instanceof Map ? (item.has(idx) ? item.get(idx) : NO_FIELD) : item.field(idx);
      item = v === NO_FIELD ? mapZero(item) : v;
    } else if (item === undefined || item === null) {
      fail("index of untyped nil");
    } else {
      fail(`can't index item of type ${typeName(item)}`);
    }
  }
  return item;
}

/** `slice`. */
export function slice(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) fail("slice of untyped nil");
  if (indexes.length > 3) fail(`too many slice indexes: ${indexes.length}`);
  let len: number;
  let bytes: Uint8Array | null = null;
  if (typeof item === "string") {
    if (indexes.length === 3) fail("cannot 3-index slice a string");
    bytes = utf8(item);
    len = bytes.length;
  } else if (Array.isArray(item)) len = item.length;
  else fail(`can't slice item of type ${typeName(item)}`);
  const idx = [0, len, len];
  indexes.forEach((x, i) => idx[i] = indexArg(x, len));
  if (idx[0] > idx[1]) fail(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1] > idx[2]) fail(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (bytes) return fromUtf8(bytes.subarray(idx[0], idx[1]));
  const out = (item as unknown[]).slice(idx[0], idx[1]);
  return typeArray(out, typeName(item));
}

/** `len`. */
export function length(item: unknown): bigint {
  if (item instanceof NilPtr) fail("len of nil pointer");
  if (typeof item === "string") return BigInt(byteLength(item));
  if (Array.isArray(item) || item instanceof Uint8Array) return BigInt(item.length);
  if (isMap(item)) return BigInt(mapEntries(item).length);
  if (item instanceof GoObject && item.kind === "string") return BigInt(byteLength(item.str()));
  if (item === undefined || item === null) fail("len of untyped nil");
  fail(`len of type ${typeName(item)}`);
}

const BAD_COMPARISON = "incompatible types for comparison";

function kindOf(v: unknown) {
  return basicKind(v);
}

function num(v: unknown): bigint {
  return intValue(v)!;
}

function str(v: unknown): string {
  return v instanceof GoObject ? v.str() : v as string;
}

/** `eq`. */
export function eq(a: unknown, ...bs: unknown[]): boolean {
  if (bs.length === 0) fail("missing argument for comparison");
  const k1 = kindOf(a);
  for (const b of bs) {
    const k2 = kindOf(b);
    let truth = false;
    if (k1 !== k2) {
      if (k1 === "int" && k2 === "uint") truth = num(a) >= 0n && num(a) === num(b);
      else if (k1 === "uint" && k2 === "int") truth = num(b) >= 0n && num(a) === num(b);
      else if (a !== undefined && a !== null && b !== undefined && b !== null) fail(BAD_COMPARISON);
    } else {
      switch (k1) {
        case "bool":
        case "float":
          truth = a === b;
          break;
        case "int":
        case "uint":
          truth = num(a) === num(b);
          break;
        case "string":
          truth = str(a) === str(b);
          break;
        default: {
          const nil1 = a === undefined || a === null || a instanceof NilPtr;
          const nil2 = b === undefined || b === null || b instanceof NilPtr;
          if (nil1 || nil2) truth = nil1 === nil2;
          else if (Array.isArray(a) || isMap(a) || a instanceof GoFunc) {
            fail(`non-comparable type ${typeName(a)}`);
          } else if (Array.isArray(b) || isMap(b) || b instanceof GoFunc) {
            fail(`non-comparable type ${typeName(b)}`);
          } else truth = a === b;
        }
      }
    }
    if (truth) return true;
  }
  return false;
}

/** `lt`. */
export function lt(a: unknown, b: unknown): boolean {
  const k1 = kindOf(a);
  const k2 = kindOf(b);
  if (k1 === "invalid" || k2 === "invalid") fail("invalid type for comparison");
  if (k1 !== k2) {
    if (k1 === "int" && k2 === "uint") return num(a) < 0n || num(a) < num(b);
    if (k1 === "uint" && k2 === "int") return num(b) >= 0n && num(a) < num(b);
    fail(BAD_COMPARISON);
  }
  switch (k1) {
    case "bool":
    case "complex":
      fail("invalid type for comparison");
      break;
    case "float":
      return (a as number) < (b as number);
    case "int":
    case "uint":
      return num(a) < num(b);
    case "string":
      return compareStrings(str(a), str(b)) < 0;
  }
  return false;
}

const builtin = (
  name: string,
  params: GoFunc["params"],
  variadic: GoFunc["variadic"],
  impl: GoFunc["impl"],
) => new GoFunc(name, params, variadic, impl);

/** Go's builtin functions. */
export const BUILTINS: ReadonlyMap<string, GoFunc> = new Map([
  ["and", builtin("and", ["value"], "value", () => undefined)],
  ["or", builtin("or", ["value"], "value", () => undefined)],
  ["not", builtin("not", ["value"], null, (a) => !(isTrue(a) ?? false))],
  ["len", builtin("len", ["value"], null, length)],
  ["index", builtin("index", ["value"], "value", index)],
  ["slice", builtin("slice", ["value"], "value", slice)],
  ["print", builtin("print", [], "any", (...a) => sprint(a))],
  ["printf", builtin("printf", ["string"], "any", (f, ...a) => sprintf(f as string, a))],
  ["println", builtin("println", [], "any", (...a) => sprintln(a))],
  ["html", builtin("html", [], "any", (...a) => htmlEscape(evalArgs(a)))],
  ["js", builtin("js", [], "any", (...a) => jsEscape(evalArgs(a)))],
  ["urlquery", builtin("urlquery", [], "any", (...a) => queryEscape(evalArgs(a)))],
  [
    "call",
    builtin("call", ["value"], "value", (fn, ...a) => {
      if (!(fn instanceof GoFunc)) fail(`non-function of type ${typeName(fn)}`);
      return fn.impl(...a);
    }),
  ],
  ["eq", builtin("eq", ["value"], "value", eq)],
  ["ne", builtin("ne", ["value", "value"], null, (a, b) => !eq(a, b))],
  ["lt", builtin("lt", ["value", "value"], null, lt)],
  ["le", builtin("le", ["value", "value"], null, (a, b) => lt(a, b) || eq(a, b))],
  ["gt", builtin("gt", ["value", "value"], null, (a, b) => !(lt(a, b) || eq(a, b)))],
  ["ge", builtin("ge", ["value", "value"], null, (a, b) => !lt(a, b))],
]);
