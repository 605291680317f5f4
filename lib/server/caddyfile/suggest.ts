/**
 * "Did you mean" for near-miss names: the closest known name by edit distance, when it is
 * close enough to be a typo (at most a third of the name's length, and at least 1 edit).
 *
 * @module
 */

/**
 * Edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
 * adjacent characters each count 1).
 *
 * @example
 * ```ts
 * import { editDistance } from "./suggest.ts";
 * editDistance("rever_proxy", "reverse_proxy"); // 2
 * ```
 */
export function editDistance(a: string, b: string): number {
  const m = a.length, n = b.length;
  let prev2: number[] = [];
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, prev2[j - 2] + 1);
      }
      cur.push(v);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[n];
}

/**
 * The known name closest to `name`, or undefined when none is close enough.
 *
 * @example
 * ```ts
 * import { suggest } from "./suggest.ts";
 * suggest("rever_proxy", ["respond", "reverse_proxy"]); // "reverse_proxy"
 * suggest("hello", ["respond"]); // undefined
 * ```
 */
export function suggest(name: string, known: Iterable<string>): string | undefined {
  if (name.length === 0 || name.length > 64) return undefined;
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    if (k === name || Math.abs(k.length - name.length) > limit) continue;
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d <= limit && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
