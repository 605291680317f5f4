/**
 * A line diff (Myers' algorithm): the shortest edit script between two lists of lines, as
 * `fmt --diff` prints it.
 *
 * @module
 */

/** One line of a diff: kept (` `), only in the old text (`-`), only in the new (`+`). */
export interface DiffLine {
  /** `" "` common, `"-"` removed, `"+"` added. */
  op: " " | "-" | "+";
  /** The line. */
  text: string;
}

/**
 * The lines of `a` and `b` as a shortest sequence of kept, removed and added lines.
 *
 * @example
 * ```ts
 * import { diffLines } from "./line_diff.ts";
 * diffLines(["a", "b"], ["a", "c"]).map((d) => d.op + d.text); // [" a", "-b", "+c"]
 * ```
 */
export function diffLines(a: string[], b: string[]): DiffLine[] {
  const n = a.length, m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])
        ? v[offset + k + 1]
        : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // walk back through the saved frontiers
  const out: DiffLine[] = [];
  let x = n, y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1] < vd[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) out.push({ op: " ", text: a[--x] }), y--;
    if (d > 0) {
      if (x === prevX) out.push({ op: "+", text: b[--y] });
      else out.push({ op: "-", text: a[--x] });
    }
  }
  while (x > 0 && y > 0) out.push({ op: " ", text: a[--x] }), y--;
  return out.reverse();
}
