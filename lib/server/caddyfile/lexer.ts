/**
 * The Gatehousefile lexer: text → tokens, each with its file and line. The grammar is the
 * Caddyfile's: words split on white space; `"..."` (only `\"` is an escape inside) and
 * `` `...` `` (no escapes) quote a word; `\` escapes the next character outside quotes and a
 * `\` before a newline continues the line; `#` at the start of a word comments out the rest
 * of the line; `<<MARKER` followed by a newline opens a heredoc that ends at `MARKER`, whose
 * indentation is stripped from every line. Environment variables `{$NAME}` and
 * `{$NAME:default}` are substituted in the text before lexing (`{env.NAME}` is a runtime
 * placeholder and stays as written).
 *
 * @module
 */

/** How a token was quoted: not at all, `"`, `` ` `` or as a heredoc (`<`). */
export type TokenQuote = "" | '"' | "`" | "<";

/** One word of a Gatehousefile, with where it came from. */
export interface Token {
  /** The file the token was read from (as given for the main file, absolute for imports). */
  file: string;
  /** 1-based line where the token starts. */
  line: number;
  /** The text, without quotes, with escapes resolved as the grammar says. */
  text: string;
  /** The quote that enclosed the token, if any. */
  quote: TokenQuote;
  /** The heredoc marker, for heredoc tokens. */
  heredocMarker: string;
  /** The chain of `import`s that brought the token in, outermost last (`file:line (import)`). */
  imports: string[];
  /** The snippet the token was defined in, if any. */
  snippetName: string;
  /** How many imports deep the token was brought in (0 or absent: written in place). */
  importDepth?: number;
}

/** A syntax error found while lexing (heredoc markers and indentation). */
export class LexError extends Error {
  /** Stable code. */
  readonly code = "lex" as const;
  /** The line the error is on (as the message says it). */
  readonly line: number;
  /** Creates the error. */
  constructor(message: string, line: number) {
    super(message);
    this.name = "LexError";
    this.line = line;
  }
}

/** Creates a token with defaults for the fields not given. */
export function makeToken(fields: Partial<Token> & { text: string }): Token {
  return {
    file: "",
    line: 0,
    quote: "",
    heredocMarker: "",
    imports: [],
    snippetName: "",
    ...fields,
  };
}

/** A copy of a token that shares nothing with the original. */
export function cloneToken(t: Token): Token {
  return { ...t, imports: [...t.imports] };
}

/** True when the token was quoted with `"`, `` ` `` or as a heredoc. */
export function isQuoted(t: Token): boolean {
  return t.quote !== "";
}

/** True for a structural (unquoted) `{`. */
export function isOpenBrace(t: Token): boolean {
  return t.text === "{" && t.quote === "";
}

/** True for a structural (unquoted) `}`. */
export function isCloseBrace(t: Token): boolean {
  return t.text === "}" && t.quote === "";
}

/** Line breaks inside a token (a heredoc counts its opening and closing lines too). */
export function lineBreaks(t: Token): number {
  let n = 0;
  for (let i = t.text.indexOf("\n"); i >= 0; i = t.text.indexOf("\n", i + 1)) n++;
  return t.quote === "<" ? n + 2 : n;
}

/** True when `b` starts on a later line than `a` ends, or comes from another file or import. */
export function isNextOnNewLine(a: Token, b: Token): boolean {
  if (a.file !== b.file) return true;
  if (a.imports.length !== b.imports.length) return true;
  for (let i = 0; i < a.imports.length; i++) if (a.imports[i] !== b.imports[i]) return true;
  return a.line + lineBreaks(a) < b.line;
}

const HEREDOC_MARKER = /^[A-Za-z0-9_-]+$/;

/** White space as Go's `unicode.IsSpace` defines it (the lexer and formatter agree on it). */
export function isSpace(ch: string): boolean {
  switch (ch) {
    case " ":
    case "\t":
    case "\n":
    case "\v":
    case "\f":
    case "\r":
    case "\u0085":
    case "\u00a0":
    case "\u1680":
    case "\u2028":
    case "\u2029":
    case "\u202f":
    case "\u205f":
    case "\u3000":
      return true;
  }
  return ch >= "\u2000" && ch <= "\u200a";
}

/** Reads environment variables; returns undefined when unset. */
export type EnvLookup = (name: string) => string | undefined;

/** The process environment (unset when the permission is missing). */
export const processEnv: EnvLookup = (name) => {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
};

/**
 * Substitutes `{$NAME}` and `{$NAME:default}` in `input` (one level: a value that itself
 * contains `{$...}` is not expanded again). An unset variable without a default becomes "".
 *
 * @example
 * ```ts
 * import { replaceEnvVars } from "./lexer.ts";
 * replaceEnvVars("root {$SITE_ROOT:/srv}", () => undefined); // "root /srv"
 * ```
 */
export function replaceEnvVars(input: string, env: EnvLookup = processEnv): string {
  let offset = 0;
  let out = input;
  for (;;) {
    const begin = out.indexOf("{$", offset);
    if (begin < 0) break;
    const end = out.indexOf("}", begin + 2);
    if (end < 0) break;
    const spec = out.slice(begin + 2, end);
    if (spec === "") {
      offset = end + 1;
      continue;
    }
    const colon = spec.indexOf(":");
    const name = colon < 0 ? spec : spec.slice(0, colon);
    let value = env(name);
    if (value === undefined) value = colon < 0 ? "" : spec.slice(colon + 1);
    out = out.slice(0, begin) + value + out.slice(end + 1);
    offset = begin + value.length;
  }
  return out;
}

/**
 * Splits `input` into tokens, all marked as coming from `filename`. Does not substitute
 * environment variables (see {@linkcode replaceEnvVars}). Throws {@linkcode LexError} on a
 * malformed heredoc.
 *
 * @example
 * ```ts
 * import { tokenize } from "./lexer.ts";
 * tokenize('example.com {\n\trespond "hi"\n}', "Gatehousefile").map((t) => t.text);
 * // ["example.com", "{", "respond", "hi", "}"]
 * ```
 */
export function tokenize(input: string, filename: string): Token[] {
  const chars = Array.from(input);
  let pos = chars[0] === "\ufeff" ? 1 : 0;
  let line = 1;
  let skipped = 0;
  const tokens: Token[] = [];

  for (;;) {
    let val: string[] = [];
    let comment = false, quoted = false, btQuoted = false;
    let inHeredoc = false, heredocEscaped = false, escaped = false;
    let marker = "";
    let tokenLine = line;
    const emit = (quote: TokenQuote): void => {
      tokens.push(makeToken({
        file: filename,
        line: tokenLine,
        text: val.join(""),
        quote,
        heredocMarker: marker,
      }));
    };

    let done = false;
    for (;;) {
      if (pos >= chars.length) {
        if (val.length > 0) {
          if (inHeredoc) {
            throw new LexError(
              `incomplete heredoc <<${marker} on line #${
                line + skipped
              }, expected ending marker ${marker}`,
              line + skipped,
            );
          }
          emit("");
        } else done = true;
        break;
      }
      const ch = chars[pos++];

      // a word starting with "<<" becomes a heredoc when a newline follows the marker
      if (
        !quoted && !btQuoted && !inHeredoc && !heredocEscaped && val.length > 1 &&
        val[0] === "<" && val[1] === "<"
      ) {
        if (ch === " ") {
          emit("");
          break;
        }
        if (ch === "\r") continue;
        if (ch === "\n") {
          if (val.length === 2) {
            throw new LexError(
              `missing opening heredoc marker on line #${line}; must contain only alphanumeric characters, dashes and underscores; got empty string`,
              line,
            );
          }
          if (val[2] === "<") {
            throw new LexError(
              `too many '<' for heredoc on line #${line}; only use two, for example <<END`,
              line,
            );
          }
          marker = val.slice(2).join("");
          if (!HEREDOC_MARKER.test(marker)) {
            throw new LexError(
              `heredoc marker on line #${line} must contain only alphanumeric characters, dashes and underscores; got '${marker}'`,
              line,
            );
          }
          inHeredoc = true;
          skipped++;
          val = [];
          continue;
        }
        val.push(ch);
        continue;
      }

      if (inHeredoc) {
        val.push(ch);
        if (ch === "\n") skipped++;
        if (val.length >= marker.length && endsWith(val, marker)) {
          val = Array.from(finishHeredoc(val.join(""), marker, line));
          line += skipped;
          skipped = 0;
          emit("<");
          break;
        }
        continue;
      }

      if (!escaped && !btQuoted && ch === "\\") {
        escaped = true;
        continue;
      }

      if (quoted || btQuoted) {
        if (quoted && escaped) {
          // inside "...", only \" is an escape; any other backslash stays
          if (ch !== '"') val.push("\\");
          escaped = false;
        } else if ((quoted && ch === '"') || (btQuoted && ch === "`")) {
          emit(quoted ? '"' : "`");
          break;
        }
        if (ch === "\n") {
          line += 1 + skipped;
          skipped = 0;
        }
        val.push(ch);
        continue;
      }

      if (isSpace(ch)) {
        if (ch === "\r") continue;
        if (ch === "\n") {
          if (escaped) {
            skipped++;
            escaped = false;
          } else {
            line += 1 + skipped;
            skipped = 0;
          }
          comment = false;
        }
        if (val.length > 0) {
          emit("");
          break;
        }
        continue;
      }

      if (ch === "#" && val.length === 0) comment = true;
      if (comment) continue;

      if (val.length === 0) {
        tokenLine = line;
        marker = "";
        if (ch === '"') {
          quoted = true;
          continue;
        }
        if (ch === "`") {
          btQuoted = true;
          continue;
        }
      }

      if (escaped) {
        // "\<" keeps "<<" from opening a heredoc; other escapes keep their backslash
        if (ch === "<") heredocEscaped = true;
        else val.push("\\");
        escaped = false;
      }
      val.push(ch);
    }
    if (done) break;
  }
  return tokens;
}

function endsWith(val: string[], marker: string): boolean {
  const tail = val.slice(val.length - marker.length).join("");
  return tail === marker;
}

/** Strips the closing marker's indentation from every line of a heredoc body. */
function finishHeredoc(text: string, marker: string, line: number): string {
  const lastNewline = text.lastIndexOf("\n");
  const lines = text.slice(0, lastNewline + 1).split("\n");
  const padding = text.slice(lastNewline + 1, text.length - marker.length);
  let out = "";
  for (let i = 0; i < lines.length - 1; i++) {
    const l = lines[i];
    if (l === "" || l === "\r") {
      out += "\n";
      continue;
    }
    if (l.indexOf(padding) !== 0) {
      throw new LexError(
        `mismatched leading whitespace in heredoc <<${marker} on line #${line + i + 1} [${
          l.replace(/[\r\n]+$/, "")
        }], expected whitespace [${padding}] to match the closing marker`,
        line + i + 1,
      );
    }
    out += (l.slice(padding.length) + "\n").replaceAll("\r", "");
  }
  if (out.endsWith("\n")) out = out.slice(0, -1);
  return out;
}
