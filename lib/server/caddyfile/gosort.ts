/**
 * Go's `sort.SliceStable` and small-slice `sort.Slice`, step for step. Several of Caddy's
 * orderings (directives, site blocks, TLS policies) use comparators that are not strict weak
 * orders; only the same algorithm gives the same result on every input.
 *
 * @module
 */

/** `less(a, b)` is true when `a` must come before `b`. */
export type Less<T> = (a: T, b: T) => boolean;

/**
 * Sorts `data` in place exactly as Go's `sort.SliceStable` would.
 *
 * @example
 * ```ts
 * import { goStableSort } from "./gosort.ts";
 * goStableSort([3, 1, 2], (a, b) => a < b); // [1, 2, 3]
 * ```
 */
export function goStableSort<T>(data: T[], less: Less<T>): T[] {
  const n = data.length;
  const lessAt = (i: number, j: number) => less(data[i], data[j]);
  const swap = (i: number, j: number) => {
    const t = data[i];
    data[i] = data[j];
    data[j] = t;
  };
  const insertion = (a: number, b: number) => {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
    }
  };
  const swapRange = (a: number, b: number, k: number) => {
    for (let i = 0; i < k; i++) swap(a + i, b + i);
  };
  const rotate = (a: number, m: number, b: number) => {
    let i = m - a, j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      let i = m, j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a, j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const nn = mid + m;
    let start: number, r: number;
    if (m > mid) {
      start = nn - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = nn - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = nn - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };

  let blockSize = 20;
  let a = 0, b = blockSize;
  while (b <= n) {
    insertion(a, b);
    a = b;
    b += blockSize;
  }
  insertion(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
  return data;
}

/**
 * Go's `sort.Slice` for the slices the adapter sorts with it (up to 12 elements it is an
 * insertion sort; longer ones fall back to the stable sort, which Go does not promise but
 * which is a valid result).
 */
export function goSort<T>(data: T[], less: Less<T>): T[] {
  if (data.length > 12) return goStableSort(data, less);
  for (let i = 1; i < data.length; i++) {
    for (let j = i; j > 0 && less(data[j], data[j - 1]); j--) {
      const t = data[j];
      data[j] = data[j - 1];
      data[j - 1] = t;
    }
  }
  return data;
}
