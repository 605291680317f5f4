/**
 * Placeholder shorthands in the JSON → Gatehousefile direction. Inside site blocks and named
 * routes the adapter expands shorthands (`{host}` → `{http.request.host}`,
 * `{header.X}` → `{http.request.header.X}`, ...) in every token; the reverse direction writes
 * the short form where it expands back to the same text, and refuses a text that the
 * expansion would change (a JSON value that literally contains `{host}` has no Gatehousefile
 * form inside a site).
 *
 * @module
 */
import {
  expandShorthands,
  PARAMETERIZED_PATTERNS,
  PARAMETERIZED_SHORTHANDS,
  PLACEHOLDER_SHORTHANDS,
} from "../shorthands.ts";

/** The adapter's fixed shorthands as one pattern (to name the one a text holds), and long → short. */
const SIMPLE_RE = new RegExp(
  PLACEHOLDER_SHORTHANDS.map(([s]) => s.replace(/[{}?%.]/g, (c) => "\\" + c)).join("|"),
  "g",
);
const LONG_SIMPLE = new Map(PLACEHOLDER_SHORTHANDS.map(([s, l]) => [l, s]));

/** Shorthands every Caddy-syntax adapter knows (the others are written in full). */
const CLASSIC = new Set([
  "{host}",
  "{hostport}",
  "{port}",
  "{method}",
  "{uri}",
  "{path}",
  "{dir}",
  "{file}",
  "{query}",
  "{?query}",
  "{remote}",
  "{remote_host}",
  "{remote_port}",
  "{scheme}",
  "{uuid}",
  "{upstream_hostport}",
]);
const CLASSIC_COMPLEX = new Set(["header.", "cookie.", "labels.", "query."]);

/** Placeholders in `text` written in their short form, where one exists. */
function shorten(text: string): string {
  return text.replace(/\{[^{}\s]+\}/g, (m) => {
    const simple = LONG_SIMPLE.get(m);
    if (simple && CLASSIC.has(simple)) return simple;
    if (simple) return m;
    const inner = m.slice(1, -1);
    for (const [short, long] of PARAMETERIZED_SHORTHANDS) {
      if (!CLASSIC_COMPLEX.has(short)) continue;
      if (inner.startsWith(long) && inner.length > long.length) {
        return `{${short}${inner.slice(long.length)}}`;
      }
    }
    return m;
  });
}

/**
 * The text to write inside a site block for a JSON string: the short form of its
 * placeholders when that expands back to `text`, else `text` itself when the adapter leaves
 * it alone. Throws a {@linkcode WordError} when every spelling would be changed.
 */
export function siteText(text: string): string {
  if (!text.includes("{")) return text;
  const short = shorten(text);
  if (short !== text && expandShorthands(short) === text) return short;
  if (expandShorthands(text) === text) return text;
  const m = text.match(SIMPLE_RE)?.[0] ??
    PARAMETERIZED_PATTERNS.map(([re]) => text.match(re)?.[0]).find((x) => x) ?? "";
  throw new WordError(
    `${
      JSON.stringify(text)
    } contains ${m}, which a Gatehousefile always expands to a full placeholder`,
  );
}

/** A JSON string that no Gatehousefile token can carry. */
export class WordError extends Error {
  /** Stable code. */
  readonly code = "unwritable" as const;
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "WordError";
  }
}
