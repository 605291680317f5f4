/**
 * The values directives produce while a Gatehousefile is adapted: routes, handlers, matcher
 * sets, and the tagged "config values" piled per site block and assembled into the config.
 *
 * @module
 */
import type { Token } from "./lexer.ts";

/** A matcher set: matcher module name → its JSON config (all must match). */
export type MatcherSet = Record<string, unknown>;

/** A handler's JSON: `handler` names the module (`http.handlers.<handler>`). */
export interface Handler {
  /** The handler module name, e.g. `static_response`. */
  handler: string;
  /** The module's fields. */
  [field: string]: unknown;
}

/** A route of the http app's JSON. */
export interface Route {
  /** Routes of the same group are mutually exclusive. */
  group?: string;
  /** Matcher sets (any may match). */
  match?: MatcherSet[];
  /** Handlers, in order. */
  handle?: Handler[];
  /** Stop after this route when it matched. */
  terminal?: boolean;
}

/**
 * Routes a directive wants kept together in this order, without a subroute around them
 * (Caddy's bare `caddyhttp.Subroute` config value).
 */
export class RouteList {
  /** The routes. */
  readonly routes: Route[];
  /** Wraps routes. */
  constructor(routes: Route[]) {
    this.routes = routes;
  }
}

/** A value produced by a directive, filed under a class (`route`, `bind`, `tls.*`, ...). */
export interface ConfigValue {
  /** Where the value goes: `route`, `error_route`, `bind`, `custom_log`, `tls.*`, ... */
  class: string;
  /** The value (a Route or RouteList for `route`). */
  value: unknown;
  /** The directive that produced it (set by the adapter; `handle_path` counts as `handle`). */
  directive?: string;
  /** The directive's name token (set by the adapter): where errors about the value point. */
  token?: Token;
}

/** A `subroute` handler around `routes` (and `errors`, when set). */
export function subrouteHandler(routes: Route[], errors?: Route[]): Handler {
  const h: Handler = { handler: "subroute" };
  if (routes.length > 0) h.routes = routes;
  if (errors && errors.length > 0) h.errors = { routes: errors };
  return h;
}

/**
 * JSON text with object keys sorted: equal for deep-equal values, whatever the key order.
 *
 * @example
 * ```ts
 * import { stableJSON } from "./types.ts";
 * stableJSON({ b: 1, a: [1, { d: 2, c: 3 }] }); // '{"a":[1,{"c":3,"d":2}],"b":1}'
 * ```
 */
export function stableJSON(v: unknown): string {
  if (v === undefined) return "null";
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJSON).join(",")}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJSON(o[k])}`).join(",")}}`;
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return stableJSON(a) === stableJSON(b);
}

/** A deep copy of a JSON value. */
export function cloneJSON<T>(v: T): T {
  return v === undefined ? v : JSON.parse(JSON.stringify(v));
}
