/**
 * Turning directive results into routes: the order of handler directives (Caddy's, or as
 * changed by `order`), the sub-sort by path specificity, mutually exclusive groups for
 * `handle`, `rewrite` and `root`, and merging adjacent routes with the same matchers. Also
 * the blocks whose subdirectives are directives (`handle`, `route`, `handle_errors`, named
 * routes).
 *
 * @module
 */
import { didYouMean, Dispenser, errorAt, withContext } from "./dispenser.ts";
import { goStableSort } from "./gosort.ts";
import {
  type AdaptContext,
  Helper,
  isRoute,
  isRouteValue,
  SIDE_CLASSES,
  SIDE_VALUES_KEY,
} from "./helper.ts";
import { directiveNames, getDirective, parseMatcherDefinition } from "./registry.ts";
import {
  type ConfigValue,
  jsonEqual,
  type MatcherSet,
  type Route,
  RouteList,
  subrouteHandler,
} from "./types.ts";

/** `handle_path` sorts and groups as `handle`. */
export function normalizeDirectiveName(name: string): string {
  return name === "handle_path" ? "handle" : name;
}

/** Merges adjacent routes with equal matchers, `terminal` and `group` (in place). */
export function consolidateRoutes(routes: Route[]): Route[] {
  for (let i = 0; i < routes.length - 1; i++) {
    const a = routes[i], b = routes[i + 1];
    if (
      jsonEqual(a.match ?? null, b.match ?? null) && !!a.terminal === !!b.terminal &&
      (a.group ?? "") === (b.group ?? "")
    ) {
      const handle = [...(a.handle ?? []), ...(b.handle ?? [])];
      routes[i] = { ...a };
      if (handle.length > 0) routes[i].handle = handle;
      else delete routes[i].handle;
      routes.splice(i + 1, 1);
      i--;
    }
  }
  return routes;
}

function singlePath(r: Route): string | undefined {
  if (r.match?.length !== 1) return undefined;
  const p = r.match[0].path;
  return Array.isArray(p) && p.length === 1 && typeof p[0] === "string" ? p[0] : undefined;
}

/** Sorts route values by directive order, then by path specificity (Caddy's `sortRoutes`). */
export function sortRoutes(values: ConfigValue[], order: readonly string[]): void {
  const pos = new Map(order.map((d, i) => [d, i]));
  goStableSort(values, (a, b) => {
    const ad = a.directive ?? "", bd = b.directive ?? "";
    if (ad !== bd) return (pos.get(ad) ?? 0) < (pos.get(bd) ?? 0);
    if (!isRoute(a.value) || !isRoute(b.value)) return false;
    const ar = a.value, br = b.value;
    const ap = singlePath(ar) ?? "", bp = singlePath(br) ?? "";
    let byPath: boolean;
    if (ap.length > 0 && bp.length > 0) {
      const at = ap.endsWith("*") ? ap.slice(0, -1) : ap;
      const bt = bp.endsWith("*") ? bp.slice(0, -1) : bp;
      if (at === bt) byPath = ap.length < bp.length;
      else if (at.length === bt.length) byPath = at < bt;
      else byPath = at.length > bt.length;
    } else {
      byPath = (ar.match?.length ?? 0) > 0 && (br.match?.length ?? 0) === 0;
    }
    // vars: least specific first, so that the most specific match is set last and wins
    return ad === "vars" ? !byPath : byPath;
  });
}

/** An error located at the directive that produced `v` (when known). */
function valueError(v: ConfigValue, message: string): Error {
  return v.token ? errorAt(v.token, message) : new Error(message);
}

/**
 * The error for a value in a block of routes that is not a route: a directive that
 * configures the site (`tls`, `bind`, `log`, ...) or errors (`handle_errors`) rather than
 * handling requests.
 */
export function notARouteError(v: ConfigValue): Error {
  return valueError(
    v,
    `${v.directive} directive returned something other than an HTTP route or subroute (only handler directives can be used in routes)`,
  );
}

/**
 * Builds the routes of a subroute from route values (Caddy's `buildSubroute`). With
 * `needsSorting` (a site, `handle`, `handle_errors`, named routes) every directive must be an
 * ordered handler; in any case every value must be a route, or the directive is refused.
 */
export function buildSubroute(
  values: ConfigValue[],
  ctx: AdaptContext,
  needsSorting: boolean,
): Route[] {
  if (needsSorting) {
    for (const v of values) {
      if (!ctx.order.includes(v.directive ?? "")) {
        throw valueError(
          v,
          `directive '${v.directive}' is not an ordered HTTP handler, so it cannot be used here - try placing within a route block or using the order global option`,
        );
      }
    }
  }
  // (an ordered directive may still give something else, e.g. after `order bind first`)
  for (const v of values) if (!isRouteValue(v)) throw notARouteError(v);
  if (needsSorting) sortRoutes(values, ctx.order);
  // handle, rewrite and root are mutually exclusive: put their routes in one group
  const groupOf = new Map<string, string>();
  for (const dir of ["handle", "rewrite", "root"]) {
    const count = values.filter((v) => v.directive === dir).length;
    if (count > 1 || dir === "rewrite") groupOf.set(dir, `group${ctx.groups.n++}`);
    else groupOf.set(dir, "");
  }
  const routes: Route[] = [];
  for (const v of values) {
    let value = v.value;
    const group = groupOf.get(v.directive ?? "");
    if (group !== undefined && isRoute(value)) {
      value = { ...value };
      if (group) (value as Route).group = group;
      else delete (value as Route).group;
    }
    if (value instanceof RouteList) routes.push(...value.routes);
    else routes.push(value as Route);
  }
  return consolidateRoutes(routes);
}

/**
 * Parses a block whose subdirectives are directives (with named matchers of its own) and
 * returns their config values. The block's first line takes no arguments.
 */
export function parseSegmentAsConfig(h: Helper): ConfigValue[] {
  const all: ConfigValue[] = [];
  while (h.next()) {
    if (h.nextArg()) throw h.argErr();
    const segments: Dispenser["tokens"][] = [];
    for (const n = h.nesting(); h.nextBlock(n);) segments.push(h.nextSegment());
    const matcherDefs = new Map<string, MatcherSet>(h.scope.matcherDefs);
    const directives = segments.filter((seg) => {
      if (!seg[0].text.startsWith("@")) return true;
      parseMatcherDefinition(new Dispenser(seg), matcherDefs);
      return false;
    });
    const blockState = { ...h.scope.blockState };
    for (const seg of directives) {
      const dir = seg[0].text;
      const fn = getDirective(dir);
      if (!fn) {
        throw h.err(
          `unrecognized directive: ${dir} - are you sure your Caddyfile structure (nesting and braces) is correct?${
            didYouMean(dir, directiveNames())
          }`,
        );
      }
      const sub = new Helper(seg, h.ctx, { ...h.scope, matcherDefs, blockState });
      let results: ConfigValue[];
      try {
        results = fn(sub);
      } catch (e) {
        throw withContext(e, `parsing caddyfile tokens for '${dir}': `, seg[0]);
      }
      for (const r of results) {
        const v = { ...r, directive: normalizeDirectiveName(dir), token: seg[0] };
        if (SIDE_CLASSES.has(v.class)) {
          ((h.scope.state[SIDE_VALUES_KEY] ??= []) as ConfigValue[]).push(v);
        } else all.push(v);
      }
    }
  }
  return all;
}

/** Parses a block of directives into the routes of one subroute (sorted by directive order). */
export function parseSegmentAsSubroute(h: Helper): Route[] {
  return buildSubroute(parseSegmentAsConfig(h), h.ctx, true);
}

/** A `subroute` handler over the routes of a block of directives. */
export function segmentSubrouteHandler(h: Helper): ReturnType<typeof subrouteHandler> {
  return subrouteHandler(parseSegmentAsSubroute(h));
}
