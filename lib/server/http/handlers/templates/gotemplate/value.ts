/**
 * Go values in JavaScript, as the template engine sees them:
 *
 * | Go                         | here                                                        |
 * | -------------------------- | ----------------------------------------------------------- |
 * | `string`                   | `string`                                                    |
 * | `bool`                     | `boolean`                                                   |
 * | `int` (and `int64`)        | `bigint`                                                    |
 * | `float64`                  | `number`                                                    |
 * | `uint8`, `uint64`, `int32` | {@linkcode GoInt} (a typed integer)                         |
 * | no value (invalid)         | `undefined`                                                 |
 * | nil interface value        | `null`                                                      |
 * | nil pointer                | {@linkcode NilPtr}                                          |
 * | `[]interface {}`, `[]T`    | arrays (`[]T` tagged with {@linkcode typeArray})            |
 * | `map[string]interface {}`  | `Map` (tagged like arrays for other element types)          |
 * | structs, pointers, methods | {@linkcode GoObject}                                        |
 * | functions                  | {@linkcode GoFunc}                                          |
 *
 * @module
 */

/** A Go type as the engine checks arguments against: a kind and the type's printed name. */
export type ParamType =
  | "string"
  | "bool"
  | "int"
  | "float64"
  | "any"
  | "value"
  | "[]any"
  | "[]string"
  | "map"
  | "time";

/** The Go name of a parameter type, as messages print it. */
export const PARAM_TYPE_NAMES: Record<ParamType, string> = {
  string: "string",
  bool: "bool",
  int: "int",
  float64: "float64",
  any: "interface {}",
  value: "reflect.Value",
  "[]any": "[]interface {}",
  "[]string": "[]string",
  map: "map[string]interface {}",
  time: "time.Time",
};

/** A nil pointer of a known type (`*tls.ConnectionState`): prints `<nil>`, is false. */
export class NilPtr {
  constructor(readonly goType: string) {}
}

/** A Go function the template can call (a builtin, a template function or a method). */
export class GoFunc {
  constructor(
    /** The name errors use. */
    readonly name: string,
    /** The fixed parameters' types. */
    readonly params: readonly ParamType[],
    /** The variadic parameter's element type, or null. */
    readonly variadic: ParamType | null,
    /** The implementation: throws a {@linkcode FuncError} (Go's returned error). */
    readonly impl: (...args: unknown[]) => unknown,
    /** True when the Go function returns a second (error) result; false for none at all. */
    readonly returnsError = true,
  ) {}
}

/** An error a Go function returns (`error calling <name>: <message>`). */
export class FuncError {
  /** Always `FuncError`. */
  readonly name = "FuncError";
  constructor(readonly message: string, readonly cause?: unknown) {}
}

/** Go's integer kinds beyond `int` (whose values are plain bigints). */
export type IntType = "int64" | "int32" | "uint8" | "uint64" | "uint";

/** A typed integer (Go's `uint8`, `int32`, `uint64`, ...). */
export class GoInt {
  constructor(readonly type: IntType, readonly v: bigint) {}
  /** True for the unsigned types. */
  get unsigned(): boolean {
    return this.type.startsWith("uint");
  }
}

/**
 * A Go struct, pointer or named type with methods. `field` answers a struct field or a map
 * key (NO_FIELD when there is none), `method` a method by name.
 */
export abstract class GoObject {
  /** The Go type's name as `%T` and errors print it (`*http.Request`). */
  abstract readonly goType: string;
  /** `struct` (fields), `map` (keys: `entries`), or `string` (a named string type). */
  readonly kind: "struct" | "map" | "string" = "struct";
  /** A method by name. */
  method(_name: string): GoFunc | undefined {
    return undefined;
  }
  /** A field (or a map entry) by name, NO_FIELD when there is none. */
  field(_name: string): unknown {
    return NO_FIELD;
  }
  /** The value printed by `%v` (`{...}` for structs); fmt calls it. */
  format(): string {
    return `{}`;
  }
  /** A map's entries, sorted as Go sorts map keys (maps only). */
  entries(): [unknown, unknown][] {
    return [];
  }
  /** The zero value of a map's elements (what a missing key gives). */
  zero(): unknown {
    return undefined;
  }
  /** A named string type's value (kind `string`). */
  str(): string {
    return "";
  }
}

/** What {@linkcode GoObject.field} answers when there is no such field. */
export const NO_FIELD: unique symbol = Symbol("no field");

const ELEM_TYPE = Symbol("go element type");

/** Tags an array or Map with its Go type (`[]string`, `map[string]string`). */
export function typeArray<T extends unknown[] | Map<unknown, unknown>>(a: T, type: string): T {
  (a as unknown as Record<symbol, string>)[ELEM_TYPE] = type;
  return a;
}

/** The Go type's name of a value (`%T`). */
export function typeName(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float64";
    case "undefined":
      return "<nil>";
  }
  if (v === null) return "<nil>";
  if (v instanceof NilPtr) return v.goType;
  if (v instanceof GoInt) return v.type;
  if (v instanceof GoObject) return v.goType;
  if (v instanceof GoFunc) return "func(...)";
  if (v instanceof Uint8Array) return "[]uint8";
  if (Array.isArray(v)) {
    return (v as unknown as Record<symbol, string>)[ELEM_TYPE] ?? "[]interface {}";
  }
  if (v instanceof Map) {
    return (v as unknown as Record<symbol, string>)[ELEM_TYPE] ?? "map[string]interface {}";
  }
  if (v instanceof Date) return "time.Time";
  return "interface {}";
}

/** Go's reflect kinds for the comparison functions. */
export type BasicKind = "bool" | "int" | "uint" | "float" | "string" | "complex" | "invalid";

/** The basic kind of a value, "invalid" for the others (Go's `basicKind`). */
export function basicKind(v: unknown): BasicKind {
  switch (typeof v) {
    case "string":
      return "string";
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float";
  }
  if (v instanceof GoInt) return v.unsigned ? "uint" : "int";
  if (v instanceof GoObject && v.kind === "string") return "string";
  return "invalid";
}

/** The integer value of an int-like value, or null. */
export function intValue(v: unknown): bigint | null {
  if (typeof v === "bigint") return v;
  if (v instanceof GoInt) return v.v;
  return null;
}

/**
 * Go's truth of a value (`isTrue`): false for the zero value of its type, empty slices, maps
 * and strings; null when the value has no truth (functions).
 */
export function isTrue(v: unknown): boolean | null {
  if (v === undefined || v === null) return false;
  switch (typeof v) {
    case "string":
      return v.length > 0;
    case "boolean":
      return v;
    case "bigint":
      return v !== 0n;
    case "number":
      return v !== 0;
  }
  if (v instanceof GoInt) return v.v !== 0n;
  if (v instanceof NilPtr) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Uint8Array) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof GoObject) {
    if (v.kind === "map") return v.entries().length > 0;
    if (v.kind === "string") return v.str().length > 0;
    return true;
  }
  if (v instanceof GoFunc) return true;
  return true;
}

const encoder = new TextEncoder();

/** A string's length in UTF-8 bytes, as Go's `len`. */
export function byteLength(s: string): number {
  // fast path: ASCII
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.length;
  return encoder.encode(s).length;
}

/** A string's UTF-8 bytes. */
export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

const decoder = new TextDecoder();

/** Bytes back to a string (invalid UTF-8 becomes U+FFFD). */
export function fromUtf8(b: Uint8Array): string {
  return decoder.decode(b);
}

/** Compares two strings byte-wise (UTF-8 order), as Go does: -1, 0 or 1. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** Sorts map keys as Go's fmt and range do (numbers by value, strings byte-wise). */
export function sortKeys(keys: unknown[]): unknown[] {
  return keys.slice().sort((a, b) => {
    if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
    const x = intValue(a) ?? (typeof a === "number" ? a : 0);
    const y = intValue(b) ?? (typeof b === "number" ? b : 0);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** A Map's entries sorted by key; a map-like GoObject's entries. */
export function mapEntries(m: Map<unknown, unknown> | GoObject): [unknown, unknown][] {
  if (m instanceof GoObject) return m.entries();
  return sortKeys([...m.keys()]).map((k) => [k, m.get(k)]);
}

/** True for values that are Go maps. */
export function isMap(v: unknown): v is Map<unknown, unknown> | GoObject {
  return v instanceof Map || (v instanceof GoObject && v.kind === "map");
}

/** The zero value of a Map's element type (missing keys with `missingkey=zero`). */
export function mapZero(m: Map<unknown, unknown> | GoObject): unknown {
  if (m instanceof GoObject) return m.zero();
  const t = typeName(m);
  if (t === "map[string]interface {}") return null;
  if (t === "map[string]string") return "";
  if (t === "map[string]int") return 0n;
  if (t === "map[string]bool") return false;
  if (t.startsWith("map[string][]")) return typeArray([], t.slice("map[string]".length));
  return undefined;
}
