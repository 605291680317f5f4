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
import { PLACEHOLDER_SHORTHANDS } from "../shorthands.ts";

/** Shorthand → placeholder, in the adapter's replacement order (the adapter's own table). */
const SIMPLE = PLACEHOLDER_SHORTHANDS;

/** Shorthands with a user-chosen last part: `{prefix.NAME}` → `{long.NAME}`. */
const COMPLEX: readonly (readonly [string, string, string])[] = [
  // short prefix, long prefix, allowed characters of the name
  ["header.", "http.request.header.", "[\\w-]*"],
  ["cookie.", "http.request.cookie.", "[\\w-]*"],
  ["labels.", "http.request.host.labels.", "[\\w-]*"],
  ["path.", "http.request.uri.path.", "[\\w-]*"],
  ["file.", "http.request.uri.path.file.", "[\\w-]*"],
  ["query.", "http.request.uri.query.", "[\\w-]*"],
  ["re.", "http.regexp.", "[\\w\\-.]*"],
  ["vars.", "http.vars.", "[\\w-]*"],
  ["rp.", "http.reverse_proxy.", "[\\w\\-.]*"],
  ["resp.", "http.intercept.", "[\\w\\-.]*"],
  ["err.", "http.error.", "[\\w\\-.]*"],
  ["file_match.", "http.matchers.file.", "[\\w-]*"],
];

const SIMPLE_RE = new RegExp(
  SIMPLE.map(([s]) => s.replace(/[{}?%.]/g, (c) => "\\" + c)).join("|"),
  "g",
);
const SIMPLE_MAP = new Map(SIMPLE.map(([s, l]) => [s, l]));
const COMPLEX_RE = COMPLEX.map(([s, l, chars]) =>
  [new RegExp(`\\{${s.replaceAll(".", "\\.")}(${chars})\\}`, "g"), `{${l}$1}`] as const
);
const LONG_SIMPLE = new Map(SIMPLE.map(([s, l]) => [l, s]));

/**
 * What the adapter makes of a token's text inside a site block: every shorthand expanded
 * (the simple ones first, leftmost match wins; then each `{prefix.NAME}` form in turn).
 */
export function expandShorthands(text: string): string {
  let out = text.replace(SIMPLE_RE, (m) => SIMPLE_MAP.get(m) ?? m);
  for (const [re, repl] of COMPLEX_RE) out = out.replace(re, repl);
  return out;
}

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
    for (const [short, long] of COMPLEX) {
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
    COMPLEX_RE.map(([re]) => text.match(re)?.[0]).find((x) => x) ?? "";
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
