/**
 * Route lists in the JSON → Gatehousefile direction: each route's handlers become directives
 * that carry the route's matcher token; routes of a mutually exclusive group become `handle`,
 * `handle_path`, `rewrite` or `root` (the directives the adapter groups); a route that only
 * `try_files` makes becomes `try_files`. Lists the adapter sorts are recorded so that the
 * directive order can be kept (see `order.ts`).
 *
 * @module
 */
import type { Ctx, Directive } from "../../../caddyfile/writer/context.ts";
import { HANDLERS } from "./handlers/mod.ts";
import {
  phpFastcgi,
  phpFastcgiSpan,
} from "../../../http/handlers/reverse_proxy/writer_php_fastcgi.ts";
import { WordError } from "../../../caddyfile/writer/placeholders.ts";
import { childPath, Fields, isObject, kindOf } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, word } from "../../../caddyfile/writer/tokens.ts";
import type { SortUnit } from "../../../caddyfile/writer/order.ts";

/** Directives the adapter puts in a route group when they appear more than once. */
const GROUPED = new Set(["handle", "handle_path", "rewrite", "root"]);

/** Writes one handler as directive(s); null after reporting a problem. */
export function reverseHandler(h: unknown, path: string, ctx: Ctx): Directive[] | null {
  if (!isObject(h)) {
    ctx.problems.add(path, `a handler must be an object, got ${kindOf(h)}`);
    return null;
  }
  const name = h.handler;
  if (typeof name !== "string") {
    ctx.problems.add(
      name === undefined ? path : childPath(path, "handler"),
      "a handler needs its module name",
    );
    return null;
  }
  // own keys only: a handler named like an Object method (`valueOf`) is unknown, not a function
  const fn = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
  if (!fn) {
    ctx.problems.add(
      path,
      `handler module ${name} has no Gatehousefile directive (http.handlers.${name})`,
    );
    return null;
  }
  const f = new Fields(h, path, ctx.problems);
  f.skip("handler");
  try {
    const out = fn(f, ctx);
    if (out === null) return null;
    f.done(`the ${name} handler`);
    return Array.isArray(out) ? out : [out];
  } catch (e) {
    if (e instanceof WordError) {
      ctx.problems.add(path, e.message);
      return null;
    }
    throw e;
  }
}

/** The line of a directive with its matcher token. */
export function directiveLine(d: Directive, matcher: string | undefined): Line {
  const words = [bare(d.name)];
  if (matcher !== undefined) words.push(word(matcher));
  else if (
    !d.noMatcherToken && !d.replacesMatcher && d.args.length > 0 &&
    (d.starFirst || d.args[0].text === "*" || /^[/@]/.test(d.args[0].text))
  ) {
    // a first argument that looks like a matcher needs an explicit "match all" before it
    words.push(bare("*"));
  }
  words.push(...d.args);
  const l: Line = { words };
  if (d.block) l.block = d.block;
  return l;
}

/** Where {@linkcode reverseRoutes} starts in a list and how it names each route's place. */
export interface RouteListOptions {
  /** The routes before this index are written elsewhere (default 0). */
  skip?: number;
  /** The path of route `i` in problems (default `<path>[i]`). */
  routePath?: (i: number) => string;
}

/**
 * Writes a route list. `sorted`: the adapter sorts this list by directive order (site blocks,
 * `handle`); the list is recorded in `ctx.sorted` so its order can be kept.
 */
export function reverseRoutes(
  routes: unknown,
  path: string,
  ctx: Ctx,
  sorted: boolean,
  { skip = 0, routePath = (i) => childPath(path, i) }: RouteListOptions = {},
): Line[] {
  const lines: Line[] = [];
  if (routes === undefined) return lines;
  if (!Array.isArray(routes)) {
    ctx.problems.add(path, `routes must be an array, got ${kindOf(routes)}`);
    return lines;
  }
  const units: SortUnit[] = [];
  // handle blocks are grouped when a list has several, so at most one ungrouped subroute
  // may be a handle: the first (handle sorts before route), and none when some are grouped
  const isSub = (h: unknown) => isObject(h) && h.handler === "subroute";
  const grouped = routes.some((r) =>
    isObject(r) && r.group !== undefined && Array.isArray(r.handle) && r.handle.some(isSub)
  );
  const firstSub = grouped
    ? -1
    : routes.findIndex((r) =>
      isObject(r) && r.group === undefined && Array.isArray(r.handle) && r.handle.some(isSub)
    );
  let prev: { match: string; group: unknown; handlers: number } | undefined;
  for (let i = skip; i < routes.length; i++) {
    const r = routes[i];
    const rp = routePath(i);
    if (!isObject(r)) {
      ctx.problems.add(rp, `a route must be an object, got ${kindOf(r)}`);
      continue;
    }
    const expanded = expandedDirectives(routes, i, path, ctx);
    if (expanded) {
      prev = undefined;
      i += expanded.span - 1;
      for (const d of expanded.directives) {
        lines.push(directiveLine(d, undefined));
        units.push({ directive: d.name, list: true });
      }
      continue;
    }
    const f = new Fields(r, rp, ctx.problems);
    const match = f.take("match");
    const group = f.take("group");
    const terminal = f.take("terminal");
    const handle = f.arr("handle") ?? [];
    f.done("a route");
    if (terminal === true) {
      ctx.problems.add(
        childPath(rp, "terminal"),
        "a terminal route inside a site has no Gatehousefile form (only site blocks end the route list)",
      );
    }
    const matchKey = JSON.stringify(match ?? null);
    if (prev && prev.match === matchKey && prev.group === group && handle.length > 0) {
      const msg =
        "follows a route with the same matchers; the Gatehousefile merges such routes into one";
      if (group !== undefined) ctx.problems.add(rp, msg + ", which changes what the group runs");
      else ctx.problems.warn(rp, msg + " (same behaviour)");
    }
    prev = { match: matchKey, group, handlers: handle.length };
    if (handle.length === 0) {
      ctx.problems.add(rp, "a route without handlers has no Gatehousefile form");
      continue;
    }
    const special = tryFiles(r);
    const token = special ? undefined : ctx.scope.token(match, childPath(rp, "match"));
    if (token === null) continue;
    const dirs: Directive[] = [];
    if (special) dirs.push(special);
    else {
      const outer = [ctx.inGroup, ctx.routeMatch, ctx.routeHandlers, ctx.soleHandle] as const;
      handle.forEach((h, j) => {
        ctx.inGroup = group !== undefined;
        ctx.soleHandle = i === firstSub && handle.findIndex(isSub) === j;
        ctx.routeMatch = match;
        ctx.routeHandlers = handle.length;
        const d = reverseHandler(h, childPath(childPath(rp, "handle"), j), ctx);
        if (d) dirs.push(...d);
      });
      [ctx.inGroup, ctx.routeMatch, ctx.routeHandlers, ctx.soleHandle] = outer;
    }
    for (const d of dirs) {
      if (group !== undefined && !GROUPED.has(d.name)) {
        ctx.problems.add(
          childPath(rp, "group"),
          `route groups come only from handle, handle_path, rewrite and root in a Gatehousefile, not ${d.name}`,
        );
        continue;
      }
      lines.push(directiveLine(d, d.replacesMatcher ? undefined : token));
      units.push({ directive: d.name, match: Array.isArray(match) ? match : undefined });
    }
  }
  if (sorted) ctx.sorted.push({ units, lines, path });
  return lines;
}

/**
 * Directives that the adapter expands into routes of their own, without a subroute
 * (`php_fastcgi` without a matcher): how many routes from `routes[i]` they span and the
 * directives (none after a problem was reported). With a matcher, `php_fastcgi` is a
 * subroute handler (see `http/handlers/subroute/mod.ts`).
 */
function expandedDirectives(
  routes: unknown[],
  i: number,
  path: string,
  ctx: Ctx,
): { span: number; directives: Directive[] } | undefined {
  const span = phpFastcgiSpan(routes, i);
  if (span > 0) {
    const directives = phpFastcgi(routes.slice(i, i + span), path, ctx, i) ?? [];
    return { span, directives };
  }
  return undefined;
}

/** `try_files`: a rewrite to `{http.matchers.file.relative}` under a file matcher. */
function tryFiles(r: Record<string, unknown>): Directive | null {
  const m = r.match, h = r.handle;
  if (!Array.isArray(m) || m.length !== 1 || !Array.isArray(h) || h.length !== 1) return null;
  const set = m[0], rw = h[0];
  if (!isObject(set) || Object.keys(set).length !== 1 || !isObject(set.file)) return null;
  if (!isObject(rw) || rw.handler !== "rewrite" || Object.keys(rw).length !== 2) return null;
  const file = set.file;
  const uri = rw.uri;
  const files = file.try_files;
  if (typeof uri !== "string" || !uri.startsWith("{http.matchers.file.relative}")) return null;
  if (!Array.isArray(files) || files.length === 0) return null;
  if (Object.keys(file).some((k) => k !== "try_files" && k !== "try_policy")) return null;
  const query = uri.slice("{http.matchers.file.relative}".length);
  if (query !== "" && (files.length !== 1 || !query.startsWith("?"))) return null;
  if (query === "" && files.some((x) => typeof x !== "string" || x.includes("?"))) return null;
  const args = files.map((x) => word(String(x) + query));
  const block = typeof file.try_policy === "string"
    ? [{ words: [bare("policy"), word(file.try_policy)] }]
    : undefined;
  return { name: "try_files", args, block, noMatcherToken: true };
}
