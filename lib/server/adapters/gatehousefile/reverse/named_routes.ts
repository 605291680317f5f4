/**
 * Named routes (`named_routes` of the servers, run by `invoke`) → `&(name) { ... }` blocks,
 * written once however many servers carry them.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { MatcherScope } from "../../../caddyfile/writer/matchers.ts";
import { childPath, isObject } from "../../../caddyfile/writer/problems.ts";
import { reverseRoutes } from "./routes.ts";
import { bare, type Block } from "../../../caddyfile/writer/tokens.ts";

/** Blocks for every named route of every server. */
export function namedRouteBlocks(
  servers: Record<string, unknown>,
  path: string,
  ctx: Ctx,
): Block[] {
  const seen = new Map<string, string>();
  const out: Block[] = [];
  for (const [srv, s] of Object.entries(servers)) {
    if (!isObject(s) || !isObject(s.named_routes)) continue;
    for (const [name, route] of Object.entries(s.named_routes)) {
      const rp = childPath(childPath(childPath(path, srv), "named_routes"), name);
      const json = JSON.stringify(route);
      if (seen.has(name)) {
        if (seen.get(name) !== json) {
          ctx.problems.add(rp, "named routes of one name differ between servers");
        }
        continue;
      }
      seen.set(name, json);
      if (!isObject(route) || Object.keys(route).some((k) => k !== "handle")) {
        ctx.problems.add(rp, "a named route is written as its handlers only");
        continue;
      }
      const handle = route.handle;
      ctx.scope = new MatcherScope(ctx.problems);
      let lines;
      if (
        Array.isArray(handle) && handle.length === 1 && isObject(handle[0]) &&
        handle[0].handler === "subroute" && Object.keys(handle[0]).length === 2
      ) {
        lines = reverseRoutes(
          handle[0].routes,
          childPath(childPath(childPath(rp, "handle"), 0), "routes"),
          ctx,
          true,
        );
      } else {
        // the handlers as one route at the named route's own path
        lines = reverseRoutes([{ handle }], rp, ctx, true, { routePath: () => rp });
      }
      out.push({ keys: [bare(`&(${name})`)], lines: [...ctx.scope.definitions, ...lines] });
    }
  }
  return out;
}
