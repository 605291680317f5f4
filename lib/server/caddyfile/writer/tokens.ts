/**
 * The output model of the JSON → Gatehousefile direction: the lexer's tokens arranged in
 * lines and blocks, written out as text and laid out by `fmt`. Every word is written in the
 * first spelling (bare, `"..."`, `` `...` ``) that the lexer reads back as exactly that text
 * and that `fmt` leaves alone; a text with no such spelling is refused with a reason.
 *
 * @module
 */
import { formatGatehousefile } from "../formatter.ts";
import { makeToken, replaceEnvVars, type Token, tokenize } from "../lexer.ts";
import { siteText, WordError } from "./placeholders.ts";

/** One line of a block: its words and the block it opens, if any. */
export interface Line {
  /** The words (the first one is the directive, option or subdirective name). */
  words: Token[];
  /** The lines of the block the line opens (`{ ... }`), if any. */
  block?: Line[];
  /** Not written (its content moved elsewhere, e.g. into a `route` block). */
  omit?: boolean;
}

/** A top-level block: a site (keys = addresses), the global options (no keys), a named route. */
export interface Block {
  /** Site addresses, or `&(name)` for a named route; empty for the global options block. */
  keys: Token[];
  /** The block's lines. */
  lines: Line[];
}

const NO_ENV = () => undefined;

function readsBackAs(spelled: string, text: string, quote: Token["quote"]): boolean {
  if (replaceEnvVars(spelled, NO_ENV) !== spelled) return false;
  let toks: Token[];
  try {
    toks = tokenize(spelled, "");
  } catch {
    return false;
  }
  if (toks.length !== 1 || toks[0].text !== text || toks[0].quote !== quote) return false;
  // fmt must leave the word alone, and the space before the next word
  const probe = `x ${spelled} y`;
  return formatGatehousefile(probe) === probe + "\n";
}

const cache = new Map<string, Token>();

/**
 * A token for `text` exactly as given (global options: no placeholder shorthands apply).
 * Throws {@linkcode WordError} when no spelling reads back as `text`.
 */
export function rawWord(text: string): Token {
  const hit = cache.get(text);
  if (hit) return hit;
  let tok: Token | undefined;
  if (text !== "" && text !== "{" && text !== "}" && readsBackAs(text, text, "")) {
    tok = makeToken({ text });
  } else if (readsBackAs(`"${text.replaceAll('"', '\\"')}"`, text, '"')) {
    tok = makeToken({ text, quote: '"' });
  } else if (!text.includes("`") && readsBackAs("`" + text + "`", text, "`")) {
    tok = makeToken({ text, quote: "`" });
  }
  if (!tok) {
    if (/\{\$[^}]+\}/.test(text)) {
      throw new WordError(
        `${
          JSON.stringify(text)
        } contains {$...}, which a Gatehousefile always replaces with an environment variable`,
      );
    }
    throw new WordError(`${JSON.stringify(text)} cannot be written as one Gatehousefile token`);
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(text, tok);
  return tok;
}

/**
 * A token for `text` inside a site block or named route, where the adapter expands
 * placeholder shorthands: written with short placeholders when they expand back to it.
 */
export function word(text: string): Token {
  return rawWord(siteText(text));
}

/** Words the adapter reads as a number or a boolean where it takes typed values (`vars`, `map`, log fields). */
const SCALAR =
  /^([+-]?\d+|[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/;

/**
 * A token for string `text` where the adapter reads typed values: quoted when written bare it
 * would read as a number or a boolean.
 */
export function stringWord(text: string, make: (t: string) => Token = word): Token {
  const w = make(text);
  return w.quote === "" && SCALAR.test(w.text) ? makeToken({ text: w.text, quote: '"' }) : w;
}

/** A token that is written bare whatever it holds (braces, matcher names, keys). */
export function bare(text: string): Token {
  return makeToken({ text });
}

/** A line of words; strings become site-block words (see {@linkcode word}). */
export function line(words: (string | Token)[], block?: Line[]): Line {
  const l: Line = { words: words.map((w) => typeof w === "string" ? word(w) : w) };
  if (block) l.block = block;
  return l;
}

/** A line of global-option words (no placeholder shorthands). */
export function gline(words: (string | Token)[], block?: Line[]): Line {
  const l: Line = { words: words.map((w) => typeof w === "string" ? rawWord(w) : w) };
  if (block) l.block = block;
  return l;
}

function spell(t: Token): string {
  switch (t.quote) {
    case '"':
      return `"${t.text.replaceAll('"', '\\"')}"`;
    case "`":
      return "`" + t.text + "`";
    default:
      return t.text;
  }
}

function writeLines(lines: Line[], depth: number, out: string[]): void {
  const indent = "\t".repeat(depth);
  for (const l of lines) {
    if (l.omit) continue;
    const text = l.words.map(spell).join(" ");
    if (l.block) {
      out.push(`${indent}${text} {`);
      writeLines(l.block, depth + 1, out);
      out.push(`${indent}}`);
    } else out.push(indent + text);
  }
}

/**
 * Writes blocks as a Gatehousefile in `fmt`'s layout (so `fmt` leaves the result unchanged).
 *
 * @example
 * ```ts
 * import { bare, line, render } from "./tokens.ts";
 * render([{ keys: [bare("example.com")], lines: [line(["respond", "hi there"])] }]);
 * // 'example.com {\n\trespond "hi there"\n}\n'
 * ```
 */
export function render(blocks: Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    if (out.length > 0) out.push("");
    const head = b.keys.map(spell).join(", ");
    out.push(head === "" ? "{" : `${head} {`);
    writeLines(b.lines, 1, out);
    out.push("}");
  }
  return formatGatehousefile(out.join("\n"));
}

/** Status code as the adapter writes it (a number when it is one). */
export function statusText(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "number" && Number.isInteger(v)) return String(v);
  if (typeof v === "string") return v;
  return undefined;
}
