/**
 * A site's error routes → `handle_errors [<codes...>] { ... }` blocks. The adapter wraps each
 * block's routes in a subroute under an expression on `{http.error.status_code}` built from
 * the codes (`4xx` → a range, `404 410` → `in [404, 410]`).
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { childPath, isObject, kindOf } from "../../../caddyfile/writer/problems.ts";
import { reverseRoutes } from "./routes.ts";
import { bare, type Line, word } from "../../../caddyfile/writer/tokens.ts";

const RANGE =
  /^\{http\.error\.status_code\} >= (\d)00 && \{http\.error\.status_code\} <= \1(?:99)$/;
const LIST = /^\{http\.error\.status_code\} in \[(\d{3}(?:, \d{3})*)\]$/;

/** The codes of a handle_errors expression, or undefined when it is not one the adapter makes. */
export function codesOf(expr: string): string[] | undefined {
  const out: string[] = [];
  let listSeen = false;
  for (const part of expr.split(" || ")) {
    const r = part.match(RANGE);
    if (r && !listSeen) {
      out.push(`${r[1]}xx`);
      continue;
    }
    const l = part.match(LIST);
    if (l && !listSeen) {
      out.push(...l[1].split(", "));
      listSeen = true;
      continue;
    }
    return undefined;
  }
  return out;
}

/**
 * The adapter's stable sort of handle_errors blocks (Go's insertion sort with a comparison
 * that is true unless a block without codes would pass one with codes).
 */
function adapterSort<T>(items: T[], hasCodes: (t: T) => boolean): T[] {
  const a = [...items];
  const less = (x: T, y: T) => !(!hasCodes(x) && hasCodes(y));
  for (let i = 1; i < a.length; i++) {
    for (let j = i; j > 0 && less(a[j], a[j - 1]); j--) [a[j], a[j - 1]] = [a[j - 1], a[j]];
  }
  return a;
}

/** The source order of blocks whose sorted order is `routes` (the first that sorts back to it). */
function sourceOrder(routes: unknown[]): number[] | undefined {
  const idx = routes.map((_, i) => i);
  const has = (i: number) =>
    isObject(routes[i]) && (routes[i] as Record<string, unknown>).match !== undefined;
  const withCodes = idx.filter(has), without = idx.filter((i) => !has(i));
  const candidates = [
    [...withCodes].reverse().concat(without),
    [...idx].reverse(),
    idx,
  ];
  for (const c of candidates) {
    if (adapterSort(c, has).every((v, k) => v === k)) return c;
  }
  return undefined;
}

/** Writes the error routes of one site. */
export function errorBlocks(routes: unknown[], path: string, ctx: Ctx): Line[] {
  const out: Line[] = [];
  const order = sourceOrder(routes);
  if (!order) {
    ctx.problems.add(path, "no order of handle_errors blocks gives these error routes");
    return out;
  }
  order.forEach((i) => {
    const r = routes[i];
    const rp = childPath(path, i);
    if (!isObject(r)) {
      ctx.problems.add(rp, `a route must be an object, got ${kindOf(r)}`);
      return;
    }
    const keys = Object.keys(r).filter((k) => k !== "match" && k !== "handle");
    const h = r.handle;
    if (
      keys.length || !Array.isArray(h) || h.length !== 1 || !isObject(h[0]) ||
      h[0].handler !== "subroute" || Object.keys(h[0]).some((k) =>
        k !== "handler" && k !== "routes"
      )
    ) {
      ctx.problems.add(
        rp,
        "error routes have a Gatehousefile form only as handle_errors blocks (one subroute each, under a status-code expression)",
      );
      return;
    }
    let codes: string[] = [];
    if (r.match !== undefined) {
      const m = r.match;
      const expr = Array.isArray(m) && m.length === 1 && isObject(m[0]) &&
          Object.keys(m[0]).length === 1 && typeof m[0].expression === "string"
        ? m[0].expression
        : undefined;
      const c = expr === undefined ? undefined : codesOf(expr);
      if (!c) {
        ctx.problems.add(
          childPath(rp, "match"),
          "error routes can only match the status codes handle_errors writes",
        );
        return;
      }
      codes = c;
    }
    const inner = childPath(childPath(childPath(rp, "handle"), 0), "routes");
    const lines = reverseRoutes(h[0].routes, inner, ctx, true);
    out.push({ words: [bare("handle_errors"), ...codes.map((c) => word(c))], block: lines });
  });
  return out;
}
