/**
 * Routes: `{group, match, handle, terminal}` lists compiled once into a chain of closures.
 * Matcher sets are OR'ed, matchers inside a set AND'ed; a matched route runs its handlers,
 * whose `next` is the rest of the route list (or the empty handler when `terminal`).
 *
 * @module
 */
import { getModule, type ProvisionContext } from "../module/mod.ts";
import { unknownModuleMessage } from "../unavailable.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import type { RequestContext } from "./context.ts";
import { ConfigError } from "../config/error.ts";
import type { HttpHandler, Next, RequestMatcher } from "./handler.ts";
import { bodyPlaceholderMark, readsBodySince } from "./replacer.ts";

/**
 * A matcher set (Caddy's `MatcherSet` as JSON, a `caddy.ModuleMap`): matcher names
 * (`http.matchers.<name>`) to their configs; every matcher of a set must match.
 */
export type MatcherSetConfig = Record<string, unknown>;

/** One route of a route list (Caddy's `Route`, `modules/caddyhttp/routes.go`). */
export type RouteConfig = {
  /** A group name: of the matching routes of one group, only the first runs. */
  group?: string;
  /** Matcher sets, any of which may match (none: every request). */
  match?: MatcherSetConfig[];
  /** The handlers, in order (`http.handlers.*`, named by their `handler` field). */
  handle?: Raw[];
  /** Stop after this route's handlers: later routes of the list do not run. */
  terminal?: boolean;
};

/** The fields of {@linkcode RouteConfig}. */
export const ROUTE_FIELDS: readonly (keyof RouteConfig)[] = [
  "group",
  "match",
  "handle",
  "terminal",
];

/** A provisioned route. */
export interface Route {
  /** Mutually exclusive group name; only the first matching route of a group runs. */
  group?: string;
  /** Matcher sets (OR of ANDs); empty = match everything. */
  matchers: RequestMatcher[][];
  /** Handler chain. */
  handlers: HttpHandler[];
  /** Stop after this route's handlers. */
  terminal: boolean;
  /** Wraps the route's compiled chain (metrics measure each route as one unit). */
  instrument?: (chain: Next) => Next;
  /** True when a matcher reads `{http.request.body}`: the body is read before matching. */
  matchReadsBody?: boolean;
}

/** Caddy's empty handler: 200 with no body, or the error status while handling an error. */
export const emptyHandler: Next = (c: RequestContext) =>
  new Response(null, { status: c.error ? c.error.status : 200 });

/**
 * Provisions a list of matcher sets (`[{"host": [...], "path": [...]}, ...]`).
 *
 * @example
 * ```ts ignore
 * const sets = await provisionMatcherSets([{ path: ["/api/*"] }], ctx, "route");
 * ```
 */
export async function provisionMatcherSets(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): Promise<RequestMatcher[][]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) mustBeArray(where);
  const sets: RequestMatcher[][] = [];
  for (const set of raw) {
    sets.push(await provisionMatcherSet(set, ctx, where));
  }
  return sets;
}

/** Provisions one matcher set (an object of matcher name to config). */
export async function provisionMatcherSet(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): Promise<RequestMatcher[]> {
  const set = Decoder.of(raw, where).raw as MatcherSetConfig;
  const out: RequestMatcher[] = [];
  for (const [name, cfg] of Object.entries(set)) out.push(await loadMatcher(ctx, name, cfg));
  return out;
}

/**
 * Loads one matcher. Matcher configs are often arrays (`host`, `path`) or strings
 * (`protocol`), which the engine's object-only loader refuses, so those are created here
 * straight from the registry (matchers hold no resources to clean up).
 */
export async function loadMatcher(
  ctx: ProvisionContext,
  name: string,
  cfg: unknown,
): Promise<RequestMatcher> {
  if (typeof cfg === "object" && cfg !== null && !Array.isArray(cfg)) {
    return await ctx.loadModuleByName<RequestMatcher>("http.matchers", name, cfg);
  }
  const def = getModule(`http.matchers.${name}`);
  if (!def) {
    throw new ConfigError("invalid_config", unknownModuleMessage(`http.matchers.${name}`));
  }
  return await def.create(cfg as Record<string, unknown>, ctx) as RequestMatcher;
}

/** Provisions a route list. */
export async function provisionRoutes(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): Promise<Route[]> {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) mustBeArray(where);
  const routes: Route[] = [];
  for (let i = 0; i < raw.length; i++) {
    const d = Decoder.of(raw[i], `${where}[${i}]`).fields(ROUTE_FIELDS);
    const handlers: HttpHandler[] = [];
    for (const h of d.array("handle") ?? []) {
      const mark = bodyPlaceholderMark();
      const handler = await ctx.loadModule<HttpHandler>("http.handlers", "handler", h);
      handlers.push(readsBodySince(mark) ? readingBody(handler) : handler);
    }
    const mark = bodyPlaceholderMark();
    const matchers = await provisionMatcherSets(d.value("match"), ctx, d.at("match"));
    routes.push({
      group: d.string("group") || undefined,
      matchers,
      handlers,
      terminal: d.bool("terminal") ?? false,
      matchReadsBody: readsBodySince(mark),
    });
  }
  return routes;
}

/** A handler whose templates read the request body: the body is read first. */
function readingBody(h: HttpHandler): HttpHandler {
  return {
    async serveHTTP(c, next) {
      await c.readBody();
      return await h.serveHTTP(c, next);
    },
  };
}

/** Compiles matcher sets to one predicate; null when the route matches everything. */
export function compileMatcherSets(
  sets: RequestMatcher[][],
): ((c: RequestContext) => boolean) | null {
  if (sets.length === 0) return null;
  const one = (set: RequestMatcher[]): (c: RequestContext) => boolean => {
    if (set.length === 1) {
      const m = set[0];
      return (c) => m.match(c);
    }
    return (c) => {
      for (let i = 0; i < set.length; i++) if (!set[i].match(c)) return false;
      return true;
    };
  };
  if (sets.length === 1) return one(sets[0]);
  const preds = sets.map(one);
  return (c) => {
    for (let i = 0; i < preds.length; i++) if (preds[i](c)) return true;
    return false;
  };
}

/** Chains handlers in front of `tail`. */
export function chainHandlers(handlers: HttpHandler[], tail: Next): Next {
  let next = tail;
  for (let i = handlers.length - 1; i >= 0; i--) {
    const h = handlers[i];
    const n = next;
    next = (c) => h.serveHTTP(c, n);
  }
  return next;
}

function wrapRoute(route: Route, next: Next): Next {
  const routed = matchRoute(route, next);
  if (!route.matchReadsBody) return routed;
  return async (c) => {
    await c.readBody();
    return await routed(c);
  };
}

function matchRoute(route: Route, next: Next): Next {
  let inner = chainHandlers(route.handlers, route.terminal ? emptyHandler : next);
  if (route.instrument) inner = route.instrument(inner);
  const match = compileMatcherSets(route.matchers);
  const group = route.group;
  if (!group) {
    if (!match) return inner;
    return (c) => match(c) ? inner(c) : next(c);
  }
  return (c) => {
    if (match && !match(c)) return next(c);
    const groups = c.groups ??= new Set();
    if (groups.has(group)) return next(c);
    groups.add(group);
    return inner(c);
  };
}

/**
 * Compiles a route list into one handler that ends in `tail`.
 *
 * @example
 * ```ts ignore
 * const handle = compileRoutes(routes, emptyHandler);
 * ```
 */
export function compileRoutes(routes: Route[], tail: Next): Next {
  let next = tail;
  for (let i = routes.length - 1; i >= 0; i--) next = wrapRoute(routes[i], next);
  return next;
}

/**
 * A route list whose tail is only known per request (subroutes, `invoke`): compiled once per
 * distinct tail and cached, so a subroute at a fixed place in a chain compiles once.
 */
export class RouteListCache {
  #routes: Route[];
  #cache = new WeakMap<Next, Next>();
  /** Wraps provisioned routes. */
  constructor(routes: Route[]) {
    this.#routes = routes;
  }
  /** The compiled chain ending in `tail`. */
  for(tail: Next): Next {
    let chain = this.#cache.get(tail);
    if (!chain) this.#cache.set(tail, chain = compileRoutes(this.#routes, tail));
    return chain;
  }
}

/** A route list or matcher set list that is not an array. */
function mustBeArray(path: string): never {
  throw new ConfigError("invalid_config", `${path}: must be array`, { path });
}
