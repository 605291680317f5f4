/**
 * JSON → Gatehousefile: turns a native JSON config (a file, or the live one from
 * `GET /config/`) back into a formatted Gatehousefile. Sites are rebuilt from the servers'
 * routes, directives from handlers, named matchers from matcher sets, global options from
 * `admin`, `logging`, `storage` and the apps. A part with no Gatehousefile form is reported
 * with its JSON path and the reason, never dropped in silence; when an adapter is at hand the
 * result is adapted again and every difference from the input is reported the same way.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import {
  MatcherScope,
  type MatcherWriter,
  registerMatcherWriters,
} from "../../../caddyfile/writer/matchers.ts";
import { positions, solveOrder, writingOrder } from "../../../caddyfile/writer/order.ts";
import { Problems, type ReverseProblem } from "../../../caddyfile/writer/problems.ts";
import { reverseHandler, reverseRoutes } from "./routes.ts";
import { phpFastcgiSubroute } from "../../../http/handlers/reverse_proxy/writer_php_fastcgi.ts";
import { type Block, gline, type Line, line, render } from "../../../caddyfile/writer/tokens.ts";
import { reverseGlobal } from "./global.ts";
import { diffJson } from "./diff.ts";
import { getAdapter } from "../../../adapter.ts";
import { MATCHERS } from "../../../http/matchers/mod.ts";

export type { ReverseProblem } from "../../../caddyfile/writer/problems.ts";

// the matcher writers the matchers' table names
registerMatcherWriters(Object.fromEntries(
  await Promise.all(
    MATCHERS.filter((e) => e.writer).map(async (e) =>
      [e.id.slice("http.matchers.".length), await e.writer!()] as [string, MatcherWriter]
    ),
  ),
));

/** Options of {@linkcode gatehousefileFromJson}. */
export interface ReverseOptions {
  /**
   * Adapts Gatehousefile text to JSON, to check the result: every difference between the
   * adapted text and the input becomes a problem. Omitted: the registered `gatehousefile`
   * adapter, when there is one; `null`: no check.
   */
  adapt?: ((text: string) => unknown | Promise<unknown>) | null;
}

/** What {@linkcode gatehousefileFromJson} produces. */
export interface ReverseResult {
  /** The Gatehousefile, formatted (`fmt` leaves it unchanged). */
  text: string;
  /** Parts of the JSON missing from the text, or adapting differently; empty when none. */
  problems: ReverseProblem[];
  /** Parts written in an equivalent but different form. */
  warnings: ReverseProblem[];
  /** True when the text was adapted again and gave back the input exactly. */
  verified: boolean;
}

/** Converts a config without checking it; see {@linkcode gatehousefileFromJson}. */
export function reverseConfig(config: unknown): Omit<ReverseResult, "verified"> {
  const problems = new Problems();
  const ctx: Ctx = {
    problems,
    scope: new MatcherScope(problems),
    sorted: [],
    inGroup: false,
    soleHandle: false,
    impliedExcludes: new Set(),
    debug: false,
    routeMatch: undefined,
    routeHandlers: 0,
    routes: (routes, path, sorted, skip) => reverseRoutes(routes, path, ctx, sorted, { skip }),
    handler: (h, path) => reverseHandler(h, path, ctx),
    expansion: (routes, path) => phpFastcgiSubroute(routes, path, ctx),
  };
  const { global, blocks } = reverseGlobal(config, ctx);
  const order = keepOrder(ctx);
  const globalLines: Line[] = [
    ...order.map(([d, , o]) => gline(["order", d, "before", o])),
    ...global,
  ];
  const all: Block[] = globalLines.length ? [{ keys: [], lines: globalLines }, ...blocks] : blocks;
  return {
    text: all.length ? render(all) : "",
    problems: problems.problems,
    warnings: problems.warnings,
  };
}

/**
 * Keeps the order of every sorted list: finds `order` options the lists agree on, and wraps
 * each list that no single order keeps in a `route` block (never sorted).
 */
function keepOrder(ctx: Ctx): [string, "before", string][] {
  let lists = ctx.sorted.filter((l) => l.units.length > 1);
  for (;;) {
    const sol = solveOrder(lists.map((l) => l.units));
    const pos = positions(sol.order);
    const orders = lists.map((l, i) => sol.accepted[i] ? writingOrder(l.units, pos) : undefined);
    const rejected = lists.filter((_, i) => !orders[i]);
    if (rejected.length === 0) {
      lists.forEach((l, i) => rewrite(l.lines, orders[i]!));
      return sol.options;
    }
    for (const l of rejected) {
      // the Line objects are shared with the block they were written into: the first becomes
      // the route block holding copies of all, the others are left out
      const inner = l.lines.map((x) => ({ ...x }));
      const [first, ...rest] = l.lines;
      const wrapper = line(["route"], inner);
      first.words = wrapper.words;
      first.block = wrapper.block;
      for (const x of rest) x.omit = true;
      ctx.problems.warn(
        l.path,
        "written inside a route block: no directive order keeps these handlers in their order (adapts to an equivalent subroute)",
      );
    }
    lists = lists.filter((l) => !rejected.includes(l));
  }
}

/** Puts the lines (shared with their block) in the writing order `order` (indexes). */
function rewrite(lines: Line[], order: number[]): void {
  const was = lines.map((l) => ({ ...l }));
  order.forEach((from, k) => {
    const { words, block, omit } = was[from];
    Object.assign(lines[k], { words, block, omit });
    if (block === undefined) delete lines[k].block;
    if (omit === undefined) delete lines[k].omit;
  });
}

/**
 * Turns a native JSON config into a formatted Gatehousefile. Parts with no Gatehousefile form
 * are listed in `problems` (JSON path and reason); with `options.adapt`, the text is adapted
 * again and any difference from `config` is listed too.
 *
 * @example
 * ```ts
 * import { gatehousefileFromJson } from "./mod.ts";
 * const { text, problems } = await gatehousefileFromJson({
 *   apps: { http: { servers: { srv0: {
 *     listen: [":443"],
 *     routes: [{
 *       match: [{ host: ["example.com"] }],
 *       handle: [{ handler: "subroute", routes: [{ handle: [{ handler: "static_response", body: "hi" }] }] }],
 *       terminal: true,
 *     }],
 *   } } } },
 * });
 * // text: "example.com {\n\trespond hi\n}\n", problems: []
 * ```
 */
export async function gatehousefileFromJson(
  config: unknown,
  options: ReverseOptions = {},
): Promise<ReverseResult> {
  const r = reverseConfig(config);
  let verified = false;
  let adapt = options.adapt;
  if (adapt === undefined) {
    const registered = getAdapter("gatehousefile");
    if (registered) {
      adapt = async (text) => (await registered.adapt(text, { filename: "Gatehousefile" })).result;
    }
  }
  if (adapt && r.text !== "") {
    let back: unknown;
    try {
      back = await adapt(r.text);
    } catch (e) {
      r.problems.push({
        path: "",
        message: `the Gatehousefile does not adapt: ${(e as Error).message}`,
      });
      return { ...r, verified };
    }
    const diffs = diffJson(config, back);
    const known = r.problems.map((p) => p.path);
    for (const d of diffs) {
      if (
        known.some((k) => d.path === k || d.path.startsWith(k + "/") || k.startsWith(d.path + "/"))
      ) continue;
      r.problems.push(d);
    }
    verified = diffs.length === 0;
  }
  return { ...r, verified };
}
