/**
 * The config tree: one JSON document addressed by path (`/config/apps/http/servers/srv0`),
 * with Caddy's semantics for GET/POST/PUT/PATCH/DELETE, `@id` indexing, canonical encoding
 * and Etags. Pure functions over JSON values; the engine serialises access.
 *
 * @module
 */
import { AdminError, jsonErrorMessage } from "./errors.ts";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/** Methods the tree understands. */
export type TreeMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The key of the config under the tree's root (`/config/...`). */
export const CONFIG_KEY = "config";

/** The meta field that names an object for `/id/<id>`. */
export const ID_KEY = "@id";

/**
 * Encodes like Go's `encoding/json` (object keys sorted, `<>&` and U+2028/9 escaped), so the
 * same config always gives the same bytes, and hashes match Caddy's.
 *
 * @example
 * ```ts
 * import { canonicalJson } from "./config_tree.ts";
 * canonicalJson({ b: 1, a: "<" }); // '{"a":"\\u003c","b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
    .replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      out[k] = sortKeys((value as Record<string, unknown>)[k]);
    }
    return out;
  }
  return value;
}

/** FNV-1a 32-bit hash of a string's UTF-8 bytes, as 8 hex digits (Caddy 2.6's Etag hash). */
export function fnv1a32(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The body a GET of `value` answers with: canonical JSON plus a newline. */
export function encodeForGet(value: Json | undefined): string {
  return canonicalJson(value ?? null) + "\n";
}

/**
 * The `Etag` of the config at `path`: `"<path> <hash>"`.
 *
 * @example
 * ```ts
 * import { makeEtag } from "./config_tree.ts";
 * makeEtag("/config/", { apps: {} });
 * ```
 */
export function makeEtag(path: string, value: Json | undefined): string {
  return `"${etagPath(path)} ${fnv1a32(encodeForGet(value))}"`;
}

/**
 * The path as an `Etag` carries it: UTF-8 bytes outside visible ASCII, and `"`, `%`, `\`,
 * percent-encoded. Config keys are any JSON strings; as they are, a key with a character above
 * U+00FF cannot be sent in a header at all, and one with a space or a quote cannot come back
 * in an `If-Match`. Plain ASCII paths read as in Caddy.
 */
function etagPath(path: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(path)) {
    out += b > 0x20 && b < 0x7f && b !== 0x22 && b !== 0x25 && b !== 0x5c
      ? String.fromCharCode(b)
      : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Parses an `If-Match` value into path and hash; throws 400 when malformed. */
export function parseIfMatch(header: string): { path: string; hash: string } {
  if (header.length < 2 || !header.startsWith('"') || !header.endsWith('"')) {
    throw new AdminError("bad_request", "malformed If-Match header; expect quoted string");
  }
  const parts = header.slice(1, -1).trim().split(/\s+/);
  if (parts.length !== 2) {
    throw new AdminError("bad_request", 'malformed If-Match header; expect format "<path> <hash>"');
  }
  let path: string;
  try {
    path = decodeURIComponent(parts[0]);
  } catch {
    throw new AdminError(
      "bad_request",
      "malformed If-Match header: its path has a bad percent-encoding (send back the Etag as received)",
    );
  }
  return { path, hash: parts[1] };
}

/**
 * Deepest nesting of arrays and objects a JSON body may have. Configs are a few dozen levels
 * deep; the limit keeps every walk over a config (canonical encoding, `@id` index, modules)
 * far from the call-stack limit.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Throws a 400 AdminError when the JSON text nests arrays/objects deeper than `max`. A linear
 * scan that skips strings, run before parsing so no deep value is ever built.
 *
 * @example
 * ```ts
 * import { checkJsonDepth } from "./config_tree.ts";
 * checkJsonDepth('{"a":[1,2]}'); // fine
 * // checkJsonDepth("[".repeat(100000)) throws: nested deeper than 1000 levels
 * ```
 */
export function checkJsonDepth(text: string, max: number = MAX_JSON_DEPTH): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) {
        throw new AdminError(
          "bad_request",
          `decoding request body: JSON nested deeper than ${max} levels`,
        );
      }
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    }
  }
}

/**
 * Throws a 400 AdminError when a parsed value (an adapter's output) nests arrays/objects
 * deeper than `max`. Walks with an explicit stack, so any depth is safe to check.
 *
 * @example
 * ```ts
 * import { checkValueDepth } from "./config_tree.ts";
 * checkValueDepth({ a: [1, { b: 2 }] }); // fine: 3 levels
 * ```
 */
export function checkValueDepth(value: unknown, max: number = MAX_JSON_DEPTH): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) {
      throw new AdminError("bad_request", `config nested deeper than ${max} levels`);
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}

/**
 * Throws a 400 AdminError naming the path (`apps.http.x`, `[2]`) of the first number that is
 * not finite (`what` starts the message): JSON text such as `1e999999` parses to Infinity, which would be saved as `null`.
 * Caddy refuses such a number when it decodes the body; so does this.
 *
 * @example
 * ```ts
 * import { checkJsonNumbers } from "./config_tree.ts";
 * checkJsonNumbers(JSON.parse('{"a":[1,2.5]}')); // fine
 * ```
 */
export function checkJsonNumbers(value: unknown, what = "decoding request body"): void {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new AdminError(
        "bad_request",
        `${what}: ${pathOfBadNumber(value)}: number out of range ` +
          "(more than a 64-bit float holds)",
      );
    }
    if (v === null || typeof v !== "object") continue;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
}

/** The path of the first non-finite number in `value` (depth first), e.g. `apps.x[2]`. */
function pathOfBadNumber(value: unknown): string {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "number" && !Number.isFinite(v)) return path.replace(/^\./, "") || "value";
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) v.forEach((c, i) => stack.push([c, `${path}[${i}]`]));
    else for (const [k, c] of Object.entries(v)) stack.push([c, `${path}.${k}`]);
  }
  return "value";
}

/**
 * Parses a request body as JSON (empty body = null); throws 400 when malformed, nested
 * deeper than {@linkcode MAX_JSON_DEPTH}, or holding a number out of range.
 */
export function decodeBody(body: string): Json {
  if (body.trim() === "") return null;
  checkJsonDepth(body);
  let value: Json;
  try {
    value = JSON.parse(body) as Json;
  } catch (e) {
    throw new AdminError("bad_request", `decoding request body: ${jsonErrorMessage(e)}`);
  }
  checkJsonNumbers(value);
  return value;
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function parseIndex(path: string, part: string, length: number, allowEnd = false): number {
  if (!/^[+-]?\d+$/.test(part)) {
    throw new AdminError("bad_request", `[${path}] invalid array index '${part}'`);
  }
  const idx = Number(part);
  if (idx < 0 || idx > length || (idx === length && !allowEnd)) {
    throw new AdminError("not_found", `[${path}] array index out of bounds: ${part}`);
  }
  return idx;
}

/**
 * Reads or changes the tree `root` (an object whose `config` key holds the config) at `path`
 * (e.g. `/config/apps/http`). GET returns the value (`undefined` for a missing key under an
 * existing object, answered as `null` like Caddy). Mutations change `root` in place, so pass
 * a copy when the change may have to be undone.
 *
 * - POST: array target → append (`/...` suffix: spread the array payload); object key →
 *   create or replace; array element path → append to that array.
 * - PUT: array index → insert there; object key → strict create (409 when present); missing
 *   intermediate objects are created.
 * - PATCH: strict replace of an existing key or element (404 when missing).
 * - DELETE: removes the key or element (404 when missing).
 *
 * @example
 * ```ts
 * import { accessTree } from "./config_tree.ts";
 * const root = { config: { apps: {} } };
 * accessTree(root, "PUT", "/config/apps/x", { a: 1 });
 * accessTree(root, "GET", "/config/apps/x"); // { a: 1 }
 * ```
 */
export function accessTree(
  root: JsonObject,
  method: TreeMethod,
  path: string,
  value: Json = null,
): Json | undefined {
  const clean = path.replace(/^\/+|\/+$/g, "");
  if (clean === "") throw new AdminError("bad_request", "no traversable path");
  const parts = clean.split("/");
  const spread = parts[parts.length - 1] === "...";
  if (spread) {
    parts.pop();
    if (method !== "POST") {
      throw new AdminError("bad_request", `[${path}] '...' is only allowed with POST`);
    }
    if (!Array.isArray(value)) throw new AdminError("bad_request", "final element is not an array");
  }
  if (parts.length === 0) throw new AdminError("bad_request", "path missing");

  let parent: Json = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i];
    const at = "/" + parts.slice(0, i + 1).join("/");
    if (isObject(parent)) {
      if ((parent[part] === undefined || parent[part] === null) && method === "PUT") {
        parent[part] = {};
      }
      const next: Json | undefined = parent[part];
      if (next === undefined || next === null) {
        throw new AdminError("not_found", `[${at}] unknown key: ${part}`);
      }
      parent = next;
    } else if (Array.isArray(parent)) {
      parent = parent[parseIndex(at, part, parent.length)];
    } else {
      throw new AdminError(
        "bad_request",
        `invalid traversal path at: ${parts.slice(0, i + 1).join("/")}`,
      );
    }
  }
  const last = parts[parts.length - 1];

  if (Array.isArray(parent)) {
    if (method === "POST") {
      if (spread) parent.push(...(value as Json[]));
      else parent.push(value);
      return undefined;
    }
    const idx = parseIndex(path, last, parent.length);
    switch (method) {
      case "GET":
        return parent[idx];
      case "PUT":
        parent.splice(idx, 0, value);
        return undefined;
      case "PATCH":
        parent[idx] = value;
        return undefined;
      case "DELETE":
        parent.splice(idx, 1);
        return undefined;
    }
  }
  if (!isObject(parent)) {
    throw new AdminError("bad_request", `invalid traversal path at: ${clean}`);
  }
  const exists = Object.hasOwn(parent, last);
  switch (method) {
    case "GET":
      return exists ? parent[last] : undefined;
    case "POST": {
      const target = parent[last];
      if (Array.isArray(target)) {
        if (spread) target.push(...(value as Json[]));
        else target.push(value);
      } else if (spread) {
        throw new AdminError("bad_request", `[${path}] target of '...' is not an array`);
      } else {
        parent[last] = value;
      }
      return undefined;
    }
    case "PUT":
      if (exists && !(parent === root && parent[last] === null)) {
        throw new AdminError("conflict", `[${path}] key already exists: ${last}`);
      }
      parent[last] = value;
      return undefined;
    case "PATCH":
      if (!exists) throw new AdminError("not_found", `[${path}] key does not exist: ${last}`);
      parent[last] = value;
      return undefined;
    case "DELETE":
      if (!exists) throw new AdminError("not_found", `[${path}] key does not exist: ${last}`);
      if (parent === root) parent[last] = null;
      else delete parent[last];
      return undefined;
  }
}

/**
 * Maps every `@id` in `config` to its path (`/config/apps/...`). Ids must be strings or
 * numbers; duplicates are an error (`indexing config: duplicate ID 'x' found at <path> and
 * <path>`, as current Caddy says).
 *
 * @example
 * ```ts
 * import { indexIds } from "./config_tree.ts";
 * indexIds({ apps: { x: { "@id": "x" } } }); // Map { "x" => "/config/apps/x" }
 * ```
 */
export function indexIds(config: Json): Map<string, string> {
  const index = new Map<string, string>();
  const walk = (v: Json, at: string) => {
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${at}/${i}`));
    } else if (isObject(v)) {
      for (const [k, item] of Object.entries(v)) {
        if (k === ID_KEY) {
          if (typeof item !== "string" && typeof item !== "number") {
            throw new AdminError(
              "bad_request",
              `indexing config: ${at}: ${ID_KEY} field must be a string or number`,
            );
          }
          const id = String(item);
          const first = index.get(id);
          if (first !== undefined) {
            // current Caddy's words (caddy.go, indexConfigObjects)
            throw new AdminError(
              "bad_request",
              `indexing config: duplicate ID '${id}' found at ${first} and ${at}`,
            );
          }
          index.set(id, at);
          continue;
        }
        walk(item, `${at}/${k}`);
      }
    }
  };
  walk(config, "/" + CONFIG_KEY);
  return index;
}

/**
 * A deep copy of `config` without meta fields (`@id`), as modules see it.
 *
 * @example
 * ```ts
 * import { stripMeta } from "./config_tree.ts";
 * stripMeta({ "@id": "a", b: 1 }); // { b: 1 }
 * ```
 */
export function stripMeta(config: Json): Json {
  if (Array.isArray(config)) return config.map(stripMeta);
  if (isObject(config)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(config)) if (k !== ID_KEY) out[k] = stripMeta(v);
    return out;
  }
  return config;
}

/**
 * A copy of `root` in which every object and array along `path` is a fresh shallow copy and
 * everything else is shared, so `accessTree(copy, method, path, ...)` never touches `root`.
 * Much cheaper than a deep clone of a large config.
 *
 * @example
 * ```ts
 * import { accessTree, copyAlongPath } from "./config_tree.ts";
 * const root = { config: { a: { b: 1 }, big: [1, 2, 3] } };
 * const next = copyAlongPath(root, "/config/a/b");
 * accessTree(next, "PATCH", "/config/a/b", 2); // root is unchanged
 * ```
 */
export function copyAlongPath(root: JsonObject, path: string): JsonObject {
  const parts = path.replace(/^\/+|\/+$/g, "").split("/").filter((p) => p !== "" && p !== "...");
  const out: JsonObject = { ...root };
  let node: Json = out;
  for (const part of parts) {
    let child: Json | undefined;
    if (Array.isArray(node)) {
      const i = Number(part);
      if (!Number.isInteger(i) || i < 0 || i >= node.length) break;
      child = node[i];
      if (child === null || typeof child !== "object") break;
      child = Array.isArray(child) ? [...child] : { ...child };
      node[i] = child;
    } else if (isObject(node)) {
      child = node[part];
      if (child === undefined || child === null || typeof child !== "object") break;
      child = Array.isArray(child) ? [...child] : { ...child };
      node[part] = child;
    } else break;
    node = child;
  }
  return out;
}
