/**
 * `subroute` handler → the directive whose expansion it is (`php_fastcgi` under a matcher,
 * which `ctx.expansion` recognises), `handle_path` (under a single path matcher, when its
 * first route only strips that path's prefix), `handle` (in a route group: the adapter groups
 * `handle` blocks), or `route` (no group: never sorted, so any order is kept).
 *
 * @module
 */
import type { Ctx, HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { word } from "../../../caddyfile/writer/tokens.ts";
import {
  DEFAULT_DIRECTIVE_ORDER,
  positions,
  writingOrder,
} from "../../../caddyfile/writer/order.ts";
import type { SubrouteConfig } from "./config.ts";

function stripPrefixOf(routes: unknown[]): string | undefined {
  const first = routes[0];
  if (!isObject(first) || Object.keys(first).join() !== "handle") return undefined;
  const h = first.handle;
  if (!Array.isArray(h) || h.length !== 1 || !isObject(h[0])) return undefined;
  const rw = h[0];
  if (rw.handler !== "rewrite" || Object.keys(rw).length !== 2) return undefined;
  return typeof rw.strip_path_prefix === "string" ? rw.strip_path_prefix : undefined;
}

function singlePath(match: unknown): string | undefined {
  if (!Array.isArray(match) || match.length !== 1 || !isObject(match[0])) return undefined;
  const set = match[0];
  if (Object.keys(set).length !== 1 || !Array.isArray(set.path) || set.path.length !== 1) return;
  const p = set.path[0];
  return typeof p === "string" && p.startsWith("/") ? p : undefined;
}

/** The prefix `handle_path <path>` strips. */
export function handlePathStrip(p: string): string {
  if (p.endsWith("/*")) return p.slice(0, -2);
  if (p.endsWith("*")) return p.slice(0, -1);
  return p;
}

/** `subroute`. */
export const writer: HandlerReverser<SubrouteConfig> = (f: Fields<SubrouteConfig>, ctx: Ctx) => {
  if (f.has("errors")) {
    f.problems.add(
      f.at("errors"),
      "error routes of a subroute have no Gatehousefile form (handle_errors applies to a whole site)",
    );
    return null;
  }
  const routes = f.arr("routes") ?? [];
  const path = f.at("routes");
  // php_fastcgi with a matcher is a subroute of its routes (never in a group: handle is)
  if (!ctx.inGroup && Array.isArray(ctx.routeMatch) && ctx.routeMatch.length > 0) {
    const expanded = ctx.expansion(routes, path);
    if (expanded) return expanded;
  }
  const p = singlePath(ctx.routeMatch);
  // handle and handle_path blocks are grouped when a list has more than one
  const single = ctx.inGroup || ctx.soleHandle;
  if (single && p !== undefined && stripPrefixOf(routes) === handlePathStrip(p)) {
    return {
      name: "handle_path",
      args: [word(p)],
      block: ctx.routes(routes, path, true, 1),
      replacesMatcher: true,
    };
  }
  if (ctx.inGroup) return { name: "handle", args: [], block: ctx.routes(routes, path, true) };
  if (ctx.soleHandle) {
    // a lone ungrouped subroute reads best as handle, when sorting keeps its order
    const before = ctx.sorted.length;
    const block = ctx.routes(routes, path, true);
    const mine = ctx.sorted.slice(before).find((l) => l.path === path);
    if (!mine || writingOrder(mine.units, positions(DEFAULT_DIRECTIVE_ORDER))) {
      return { name: "handle", args: [], block };
    }
    ctx.sorted.splice(ctx.sorted.indexOf(mine), 1);
    return { name: "route", args: [], block };
  }
  return { name: "route", args: [], block: ctx.routes(routes, path, false) };
};
