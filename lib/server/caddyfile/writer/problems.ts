/**
 * What the JSON → Gatehousefile direction could not express, and a reader of JSON objects
 * that remembers which fields were used, so that no field is dropped without a word: every
 * field left unread when a part is done becomes a problem naming its JSON path.
 *
 * @module
 */

/** A part of the JSON config that has no Gatehousefile form (or was written differently). */
export interface ReverseProblem {
  /** JSON path in the config, as the admin API addresses it, e.g. `/apps/http/servers/srv0/listen/0`. */
  path: string;
  /** Why it has no Gatehousefile form, in words. */
  message: string;
}

/** Collects problems (fatal: the part is missing from the output) and warnings (written differently). */
export class Problems {
  /** Parts that are not in the output. */
  readonly problems: ReverseProblem[] = [];
  /** Parts written in an equivalent but different form (adapting gives other JSON). */
  readonly warnings: ReverseProblem[] = [];

  /** Records a part that has no Gatehousefile form. */
  add(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** Records a part written in an equivalent, different form. */
  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }
}

/** JSON path of a child: `/a/b` + `c` → `/a/b/c` (with `~` and `/` escaped as in RFC 6901). */
export function childPath(path: string, key: string | number): string {
  return `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

/** A JSON value's kind for messages. */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** True for a plain JSON object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Reads the fields of one JSON object and reports, when done, every field that was not
 * read. Typed getters report a field of the wrong type and return undefined. `T` is the
 * module's config type when the writer knows it (`Fields<FileServerConfig>`): the field names
 * a writer reads are then checked by the compiler against the module's own config.
 */
// deno-lint-ignore no-explicit-any
export class Fields<T extends Record<string, any> = Record<string, unknown>> {
  /** The object read. */
  readonly value: Record<string, unknown>;
  /** Its JSON path. */
  readonly path: string;
  /** Where problems go. */
  readonly problems: Problems;
  private readonly used = new Set<string>();

  /** A reader over `value` at `path`. */
  constructor(value: Record<string, unknown>, path: string, problems: Problems) {
    this.value = value;
    this.path = path;
    this.problems = problems;
  }

  /** The JSON path of field `key`. */
  at(key: (keyof T & string) | number): string {
    return childPath(this.path, key);
  }

  /** True when the object has the field (even if null). */
  has(key: keyof T & string): boolean {
    return Object.hasOwn(this.value, key) && this.value[key] !== undefined;
  }

  /** The field's raw value, marked as read. */
  take(key: keyof T & string): unknown {
    this.used.add(key);
    return this.value[key];
  }

  /** Marks fields as read without reading them (e.g. a module's name key). */
  skip(...keys: (keyof T & string)[]): void {
    for (const k of keys) this.used.add(k);
  }

  /** Field names not read yet. */
  rest(): string[] {
    return Object.keys(this.value).filter((k) => !this.used.has(k) && this.value[k] !== undefined);
  }

  private typed<V>(
    key: keyof T & string,
    want: string,
    ok: (v: unknown) => boolean,
  ): V | undefined {
    if (!this.has(key)) {
      this.used.add(key);
      return undefined;
    }
    const v = this.take(key);
    if (!ok(v)) {
      this.problems.add(this.at(key), `expected ${want}, got ${kindOf(v)}`);
      return undefined;
    }
    return v as V;
  }

  /** A string field. */
  str(key: keyof T & string): string | undefined {
    return this.typed<string>(key, "a string", (v) => typeof v === "string");
  }

  /** A number field. */
  num(key: keyof T & string): number | undefined {
    return this.typed<number>(key, "a number", (v) => typeof v === "number");
  }

  /** A boolean field. */
  bool(key: keyof T & string): boolean | undefined {
    return this.typed<boolean>(key, "a boolean", (v) => typeof v === "boolean");
  }

  /** An array field. */
  arr(key: keyof T & string): unknown[] | undefined {
    return this.typed<unknown[]>(key, "an array", Array.isArray);
  }

  /** An array of strings. */
  strs(key: keyof T & string): string[] | undefined {
    const a = this.arr(key);
    if (!a) return undefined;
    if (!a.every((s) => typeof s === "string")) {
      this.problems.add(this.at(key), "expected an array of strings");
      return undefined;
    }
    return a as string[];
  }

  /** An object field. */
  obj(key: keyof T & string): Record<string, unknown> | undefined {
    return this.typed<Record<string, unknown>>(key, "an object", isObject);
  }

  /** A reader over an object field (`U`: the field's config type, when the writer knows it). */
  // deno-lint-ignore no-explicit-any
  fields<U extends Record<string, any> = Record<string, unknown>>(
    key: keyof T & string,
  ): Fields<U> | undefined {
    const o = this.obj(key);
    return o ? new Fields<U>(o, this.at(key), this.problems) : undefined;
  }

  /**
   * Reports every field not read as having no Gatehousefile form in `what` (e.g.
   * `the static_response handler`).
   */
  done(what: string): void {
    for (const k of this.rest()) {
      this.used.add(k);
      this.problems.add(this.at(k), `field ${k} of ${what} has no Gatehousefile form`);
    }
  }
}
