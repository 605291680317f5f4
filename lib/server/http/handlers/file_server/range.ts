/**
 * What a `Range` header asks of content of a known size, settled once: the whole content, the
 * ranges to send, or 416. Parsing follows Go's `http.ServeContent` (which Caddy uses), with
 * RFC 9110 §14 where Go strays: an unknown range unit is ignored, a zero-length suffix
 * (`bytes=-0`) and any range of an empty file are unsatisfiable. Against amplification
 * (RFC 9110 §17.15): overlapping and adjacent ranges are coalesced, and a request whose ranges
 * add up to more than the content (before coalescing, as Go) or that still has more than
 * `RANGE_LIMITS.maxRanges` ranges after coalescing gets the whole content with 200, as nginx
 * and Apache answer such requests.
 *
 * @module
 */

/** A byte range `[start, start+length)`. */
export interface ByteRange {
  /** First byte. */
  start: number;
  /** Number of bytes (at least 1). */
  length: number;
}

/** The limits applied to `Range` (documented in docs/security.md). */
export const RANGE_LIMITS: {
  /** Ranges (after coalescing) a multipart answer may have; more get the whole content. */
  readonly maxRanges: number;
} = { maxRanges: 100 };

/** What to answer. */
export type RangePlan =
  /** 200 with the whole content: no Range, an unknown unit, or too much asked. */
  | { kind: "full" }
  /** 416 (Content-Range with the size only): no range overlaps the content. */
  | { kind: "unsatisfiable" }
  /** 416 (Content-Range with the size only): the Range header is malformed. */
  | { kind: "invalid" }
  /** 206: one range, or several as multipart/byteranges, in the order to send them. */
  | { kind: "partial"; ranges: ByteRange[] };

const DIGITS = /^[0-9]+$/;

/**
 * Overlapping and adjacent ranges merged. When nothing overlaps or touches, the ranges keep
 * the order the client asked for; otherwise they come sorted by start.
 *
 * @example
 * ```ts
 * import { coalesce } from "./range.ts";
 * coalesce([{ start: 0, length: 5 }, { start: 3, length: 5 }]); // [{ start: 0, length: 8 }]
 * ```
 */
export function coalesce(ranges: ByteRange[]): ByteRange[] {
  if (ranges.length < 2) return ranges;
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: ByteRange[] = [{ ...sorted[0] }];
  for (let i = 1; i < sorted.length; i++) {
    const last = out[out.length - 1];
    const r = sorted[i];
    const lastEnd = last.start + last.length;
    if (r.start <= lastEnd) last.length = Math.max(lastEnd, r.start + r.length) - last.start;
    else out.push({ ...r });
  }
  return out.length === ranges.length ? ranges : out;
}

/**
 * Settles a `Range` header for content of `size` bytes.
 *
 * @example
 * ```ts
 * import { planRange } from "./range.ts";
 * planRange("bytes=0-9", 100); // { kind: "partial", ranges: [{ start: 0, length: 10 }] }
 * planRange("bytes=-0", 100); // { kind: "unsatisfiable" }
 * planRange("bytes=0-9,5-20", 100); // { kind: "partial", ranges: [{ start: 0, length: 21 }] }
 * ```
 */
export function planRange(header: string | null, size: number): RangePlan {
  if (!header) return { kind: "full" };
  const eq = header.indexOf("=");
  if (eq < 0) return { kind: "invalid" };
  if (header.slice(0, eq).trim().toLowerCase() !== "bytes") return { kind: "full" };
  const ranges: ByteRange[] = [];
  let unsatisfiable = false;
  let sum = 0;
  for (let spec of header.slice(eq + 1).split(",")) {
    spec = spec.trim();
    if (!spec) continue;
    const dash = spec.indexOf("-");
    if (dash < 0) return { kind: "invalid" };
    const first = spec.slice(0, dash).trim();
    const last = spec.slice(dash + 1).trim();
    if (first === "") {
      // A suffix: the last `n` bytes.
      if (!DIGITS.test(last)) return { kind: "invalid" };
      const n = Math.min(Number(last), size);
      if (n === 0) {
        unsatisfiable = true;
        continue;
      }
      ranges.push({ start: size - n, length: n });
      sum += n;
      continue;
    }
    if (!DIGITS.test(first)) return { kind: "invalid" };
    const start = Number(first);
    let end = size - 1;
    if (last !== "") {
      if (!DIGITS.test(last)) return { kind: "invalid" };
      const e = Number(last);
      if (e < start) return { kind: "invalid" };
      if (e < end) end = e;
    }
    if (start >= size) {
      unsatisfiable = true;
      continue;
    }
    ranges.push({ start, length: end - start + 1 });
    sum += end - start + 1;
  }
  if (ranges.length === 0) return unsatisfiable ? { kind: "unsatisfiable" } : { kind: "full" };
  if (sum > size) return { kind: "full" };
  const merged = coalesce(ranges);
  if (merged.length > RANGE_LIMITS.maxRanges) return { kind: "full" };
  return { kind: "partial", ranges: merged };
}
