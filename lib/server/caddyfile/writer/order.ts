/**
 * Directive order in the JSON → Gatehousefile direction. Inside a site block (and `handle`
 * blocks) the adapter sorts directives by Caddy's directive order, then by path specificity
 * within one directive; a route list read from JSON keeps its order only when that sort
 * leaves it alone. When it would not, the `order` global option can make it so (one order
 * for the whole file, found by a topological sort of the pairs every list needs); what no
 * single order can satisfy is written inside a `route { }` block, which is never sorted.
 *
 * @module
 */

import { goStableSort } from "../gosort.ts";
import { DEFAULT_DIRECTIVE_ORDER } from "../registry.ts";

export { DEFAULT_DIRECTIVE_ORDER };

/** One directive of a sorted list: its name (as sorted: `handle_path` sorts as `handle`) and matcher. */
export interface SortUnit {
  /** The directive name. */
  directive: string;
  /** The route's matcher sets (JSON), if any. */
  match?: unknown[];
  /** Several routes kept together without a subroute (`php_fastcgi`): never sorted by path. */
  list?: boolean;
}

function sortName(d: string): string {
  return d === "handle_path" ? "handle" : d;
}

function singlePath(u: SortUnit): string | undefined {
  if (!u.match || u.match.length !== 1) return undefined;
  const set = u.match[0] as Record<string, unknown>;
  const p = set?.path;
  return Array.isArray(p) && p.length === 1 && typeof p[0] === "string" ? p[0] : undefined;
}

/** Caddy's `sortRoutes` comparison for two units of the same directive: true when `a` goes first. */
function lessSameDirective(a: SortUnit, b: SortUnit): boolean {
  if (a.list || b.list) return false;
  const ip = singlePath(a) ?? "", jp = singlePath(b) ?? "";
  let byPath: boolean;
  if (ip.length > 0 && jp.length > 0) {
    const it = ip.endsWith("*") ? ip.slice(0, -1) : ip;
    const jt = jp.endsWith("*") ? jp.slice(0, -1) : jp;
    if (it === jt) byPath = ip.length < jp.length;
    else if (it.length === jt.length) byPath = it < jt;
    else byPath = it.length > jt.length;
  } else {
    byPath = (a.match?.length ?? 0) > 0 && (b.match?.length ?? 0) === 0;
  }
  return sortName(a.directive) === "vars" ? !byPath : byPath;
}

/** The adapter's comparison of two sort units (directive positions `pos`). */
function lessUnits(pos: Map<string, number>): (a: SortUnit, b: SortUnit) => boolean {
  return (a, b) => {
    const da = sortName(a.directive), db = sortName(b.directive);
    if (da !== db) return (pos.get(da) ?? 0) < (pos.get(db) ?? 0);
    return lessSameDirective(a, b);
  };
}

/** True when sorting `units` written in the order `written` (indexes) gives their own order. */
function sortsInto(units: SortUnit[], written: number[], pos: Map<string, number>): boolean {
  const less = lessUnits(pos);
  const order = [...written];
  goStableSort(order, (i, j) => less(units[i], units[j]));
  return order.every((v, i) => v === i);
}

/**
 * True when the adapter's stable sort (with directive positions `pos`) keeps `units` in the
 * given order. The sort is run as the adapter runs it (Go's stable sort): its comparison is
 * not a strict order (routes kept together without a subroute compare equal to everything,
 * two `vars` without paths each sort before the other), so no pairwise rule predicts it.
 */
export function keepsOrder(units: SortUnit[], pos: Map<string, number>): boolean {
  return sortsInto(units, units.map((_, i) => i), pos);
}

/**
 * An order to write `units` in (indexes) that the adapter's sort turns into their own order,
 * or undefined: as they are, else with runs of one directive reversed (the sort reverses two
 * `vars` without paths, for instance), each run or all of them.
 */
export function writingOrder(units: SortUnit[], pos: Map<string, number>): number[] | undefined {
  const identity = units.map((_, i) => i);
  if (sortsInto(units, identity, pos)) return identity;
  const runs: [number, number][] = [];
  for (let i = 0; i < units.length;) {
    let j = i + 1;
    while (j < units.length && sortName(units[j].directive) === sortName(units[i].directive)) j++;
    if (j - i > 1) runs.push([i, j]);
    i = j;
  }
  // every subset of runs reversed, for a few runs; all of them reversed beyond that
  const subsets = runs.length <= 6
    ? Array.from({ length: 2 ** runs.length - 1 }, (_, m) => m + 1)
    : [2 ** runs.length - 1];
  for (const mask of subsets) {
    const written = [...identity];
    runs.forEach(([a, b], k) => {
      if (mask & (1 << k)) written.splice(a, b - a, ...identity.slice(a, b).reverse());
    });
    if (sortsInto(units, written, pos)) return written;
  }
  return undefined;
}

/** Directive positions of an order list. */
export function positions(order: readonly string[]): Map<string, number> {
  return new Map(order.map((d, i) => [d, i]));
}

/** The result of {@linkcode solveOrder}. */
export interface OrderSolution {
  /** The directive order to use. */
  order: string[];
  /** `order` global options (`[name, "before", other]`) turning the default into it. */
  options: [string, "before", string][];
}

/**
 * Finds one directive order under which every list keeps its order, starting from the
 * default and moving as little as it can. Lists needing pairs that contradict each other
 * are left out (the caller writes them in `route` blocks); `accepted` tells which.
 */
export function solveOrder(lists: SortUnit[][]): OrderSolution & { accepted: boolean[] } {
  const def = positions(DEFAULT_DIRECTIVE_ORDER);
  const accepted = lists.map(() => true);
  const edges = new Map<string, Set<string>>();
  const needed = (units: SortUnit[]): [string, string][] => {
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < units.length; i++) {
      const a = sortName(units[i].directive), b = sortName(units[i + 1].directive);
      if (a !== b) pairs.push([a, b]);
    }
    return pairs;
  };
  const hasPath = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) {
      const n = stack.pop()!;
      if (n === to) return true;
      if (seen.has(n)) continue;
      seen.add(n);
      for (const m of edges.get(n) ?? []) stack.push(m);
    }
    return false;
  };
  lists.forEach((units, i) => {
    const pairs = needed(units);
    if (pairs.some(([a, b]) => hasPath(b, a))) {
      accepted[i] = false;
      return;
    }
    for (const [a, b] of pairs) {
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a)!.add(b);
    }
  });
  // Kahn's algorithm, taking the directive earliest in the default order first
  const names = [...DEFAULT_DIRECTIVE_ORDER];
  const indeg = new Map(names.map((n) => [n, 0]));
  for (const [, tos] of edges) for (const t of tos) indeg.set(t, (indeg.get(t) ?? 0) + 1);
  const order: string[] = [];
  const ready = names.filter((n) => indeg.get(n) === 0);
  while (ready.length) {
    ready.sort((a, b) => (def.get(a) ?? 0) - (def.get(b) ?? 0));
    const n = ready.shift()!;
    order.push(n);
    for (const t of edges.get(n) ?? []) {
      indeg.set(t, indeg.get(t)! - 1);
      if (indeg.get(t) === 0) ready.push(t);
    }
  }
  return { order, options: orderOptions(order), accepted };
}

/** Applies `order X before Y` options to the default order, as the adapter does. */
export function applyOrderOptions(options: [string, "before", string][]): string[] {
  const list = [...DEFAULT_DIRECTIVE_ORDER];
  for (const [x, , y] of options) {
    const i = list.indexOf(x);
    if (i >= 0) list.splice(i, 1);
    list.splice(list.indexOf(y), 0, x);
  }
  return list;
}

function orderOptions(target: string[]): [string, "before", string][] {
  const same = (a: readonly string[]) => a.every((d, i) => d === target[i]);
  if (same(DEFAULT_DIRECTIVE_ORDER)) return [];
  // move, from the right, each directive whose successor differs from the target's
  const opts: [string, "before", string][] = [];
  let current = [...DEFAULT_DIRECTIVE_ORDER];
  for (let i = target.length - 2; i >= 0; i--) {
    const d = target[i], next = target[i + 1];
    if (current[current.indexOf(d) + 1] === next) continue;
    opts.push([d, "before", next]);
    current = applyOrderOptions(opts);
  }
  return opts;
}
