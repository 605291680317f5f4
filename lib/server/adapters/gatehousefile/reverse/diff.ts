/**
 * Where two JSON values differ, as JSON paths with both values in words (the check that
 * adapting the written Gatehousefile gives the input back).
 *
 * @module
 */
import { childPath, isObject, type ReverseProblem } from "../../../caddyfile/writer/problems.ts";

function show(v: unknown): string {
  if (v === undefined) return "nothing";
  const s = JSON.stringify(v);
  return s.length > 120 ? s.slice(0, 117) + "..." : s;
}

/** The differences between `want` and `got` (at most `limit`), deepest path first seen. */
export function diffJson(want: unknown, got: unknown, limit = 20): ReverseProblem[] {
  const out: ReverseProblem[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (out.length >= limit) return;
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
        walk(a[k], b[k], childPath(path, k));
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(x, b[i], childPath(path, i)));
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    out.push({
      path,
      message: `the Gatehousefile adapts to ${show(b)} here instead of ${show(a)}`,
    });
  };
  walk(want, got, "");
  return out;
}
