/**
 * `fmt`: the canonical layout of a Gatehousefile, as Caddy's formatter writes it. One pass
 * over the characters that owns every brace and every run of white space: one tab per
 * nesting level, one space between words, `{` at the end of its line, `}` alone on its
 * line, at most one blank line in a row, a blank line between top-level blocks, one
 * trailing newline. Words, comments, quoted text, heredocs and escapes are written as they
 * are.
 *
 * @module
 */
import { isSpace } from "./lexer.ts";

const HEREDOC_MARKER = /^[A-Za-z0-9_-]+$/;

/** Heredoc states: not in one, reading its opening marker, inside its body. */
const Heredoc = { Closed: 0, Opening: 1, Opened: 2 } as const;

/**
 * Formats a Gatehousefile.
 *
 * @example
 * ```ts
 * import { formatGatehousefile } from "./formatter.ts";
 * formatGatehousefile("example.com{\nrespond   hi\n}"); // "example.com {\n\trespond hi\n}\n"
 * ```
 */
export function formatGatehousefile(input: string): string {
  const chars = Array.from(trimSpace(input));
  const out: string[] = [];

  let last = ""; // the last character written
  let space = true; // the previous character was white space (start counts as space)
  let beginningOfLine = true;
  let openBrace = false; // the current word is or started with "{"
  let openBraceWritten = false;
  let openBraceSpace = false; // a non-newline space came before the "{"
  let newLines = 0;
  let comment = false;
  let quotes = ""; // "", "`", '"', '"`' or '`"'
  let escaped = false;
  let heredoc: number = Heredoc.Closed;
  let heredocEscaped = false;
  let heredocMarker: string[] = [];
  let closingMarker: string[] = [];
  let nesting = 0;
  let currentToken = "";
  let lineFirstToken = "";
  let prevLineWasTopLevelImport = false;
  let openBraceOwnLine = false;

  const finishToken = () => {
    if (currentToken === "") return;
    if (lineFirstToken === "") lineFirstToken = currentToken;
    currentToken = "";
  };
  const finishLine = () => {
    finishToken();
    if (lineFirstToken !== "") {
      prevLineWasTopLevelImport = nesting === 0 && lineFirstToken === "import";
    } else if (!openBrace || !openBraceOwnLine || openBraceWritten) {
      prevLineWasTopLevelImport = false;
    }
    lineFirstToken = "";
  };
  const write = (ch: string) => {
    out.push(ch);
    last = ch;
  };
  const indent = () => {
    for (let i = 0; i < nesting; i++) write("\t");
  };
  const nextLine = () => {
    write("\n");
    beginningOfLine = true;
  };

  for (const ch of chars) {
    // "<<" after a space may open a heredoc
    if (
      quotes === "" && heredoc === Heredoc.Closed && !heredocEscaped && space && last === "<" &&
      ch === "<"
    ) {
      write(ch);
      heredoc = Heredoc.Opening;
      space = false;
      continue;
    }

    if (heredoc === Heredoc.Opening) {
      if (ch === "\n") {
        if (heredocMarker.length > 0 && HEREDOC_MARKER.test(heredocMarker.join(""))) {
          heredoc = Heredoc.Opened;
        } else {
          heredocMarker = [];
          heredoc = Heredoc.Closed;
          nextLine();
          continue;
        }
        write(ch);
        continue;
      }
      if (isSpace(ch)) {
        // a space means an ordinary word, not a heredoc
        heredocMarker = [];
        heredoc = Heredoc.Closed;
      } else {
        heredocMarker.push(ch);
        write(ch);
        continue;
      }
    }

    // inside a heredoc everything is copied until the marker followed by white space
    if (heredoc === Heredoc.Opened) {
      closingMarker.push(ch);
      if (closingMarker.length > heredocMarker.length + 1) closingMarker = closingMarker.slice(1);
      if (isSpace(ch) && sameChars(closingMarker.slice(0, -1), heredocMarker)) {
        heredocMarker = [];
        closingMarker = [];
        heredoc = Heredoc.Closed;
      } else {
        write(ch);
        if (ch === "\n") closingMarker = [];
        continue;
      }
    }

    if (last === "<" && space) space = false;

    if (comment) {
      if (ch === "\n") {
        comment = false;
        space = true;
        nextLine();
      } else write(ch);
      continue;
    }

    if (!escaped && ch === "\\") {
      if (space) {
        write(" ");
        space = false;
      }
      write(ch);
      escaped = true;
      continue;
    }

    if (escaped) {
      if (ch === "<") heredocEscaped = true;
      write(ch);
      escaped = false;
      continue;
    }

    if (ch === "`") {
      if (quotes === '"`') quotes = '"';
      else if (quotes === "`") quotes = "";
      else if (quotes === '"') quotes = '"`';
      else quotes = "`";
    }

    if (quotes === '"') {
      if (ch === '"') quotes = "";
      write(ch);
      continue;
    }

    if (ch === '"') {
      if (quotes === "") {
        if (space) quotes = '"';
      } else if (quotes === '`"') quotes = "`";
      else if (quotes === '"`') quotes = "";
    }

    if (quotes.includes("`")) {
      if (ch === "`" && space && !beginningOfLine) write(" ");
      write(ch);
      space = false;
      continue;
    }

    if (isSpace(ch)) {
      finishToken();
      space = true;
      heredocEscaped = false;
      if (ch === "\n") {
        finishLine();
        newLines++;
      }
      continue;
    }
    const spacePrior = space;
    space = false;

    // from here on, an ordinary character of a word

    if (ch === "#") comment = true;

    if (openBrace && spacePrior && !openBraceWritten) {
      if (nesting === 0 && last === "}") {
        nextLine();
        nextLine();
      }
      openBrace = false;
      if (openBraceOwnLine && prevLineWasTopLevelImport) {
        if (last !== "\n") nextLine();
        indent();
      } else if (beginningOfLine) indent();
      else if (!openBraceSpace || !isSpace(last)) write(" ");
      write("{");
      openBraceWritten = true;
      openBraceOwnLine = false;
      nextLine();
      newLines = 0;
      if (nesting < 10) nesting++; // bounded, for absurd inputs
    }

    if (ch === "{") {
      finishToken();
      openBrace = true;
      openBraceSpace = spacePrior && !beginningOfLine;
      openBraceOwnLine = newLines > 0;
      if (openBraceSpace && newLines === 0) write(" ");
      openBraceWritten = false;
      if (quotes === "`") {
        write("{");
        openBraceWritten = true;
        openBraceOwnLine = false;
      }
      continue;
    }
    if (ch === "}" && (spacePrior || !openBrace)) {
      finishToken();
      if (quotes === "`") {
        write("}");
        continue;
      }
      if (last !== "\n") nextLine();
      if (nesting > 0) nesting--;
      indent();
      write("}");
      newLines = 0;
      continue;
    }

    if (newLines > 2) newLines = 2;
    for (let i = 0; i < newLines; i++) nextLine();
    newLines = 0;
    if (beginningOfLine) indent();
    if (nesting === 0 && last === "}" && beginningOfLine) {
      nextLine();
      nextLine();
    }
    if (!beginningOfLine && spacePrior) write(" ");
    if (openBrace && !openBraceWritten) {
      write("{");
      openBraceWritten = true;
    }
    if (spacePrior && ch === "<") space = true;
    currentToken += ch;
    write(ch);
    beginningOfLine = false;
  }

  return trimSpace(out.join("")) + "\n";
}

/** Trims white space as Go's `bytes.TrimSpace` does. */
function trimSpace(s: string): string {
  let start = 0, end = s.length;
  while (start < end && isSpace(s[start])) start++;
  while (end > start && isSpace(s[end - 1])) end--;
  return s.slice(start, end);
}

function sameChars(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

/** Where the formatted text first differs from `input` (1-based line), or undefined. */
export function firstUnformattedLine(input: string): number | undefined {
  const normalized = input.replaceAll("\r\n", "\n");
  const formatted = formatGatehousefile(normalized);
  if (formatted === normalized) return undefined;
  let line = 1;
  for (let i = 0; i < normalized.length; i++) {
    if (i >= formatted.length || normalized[i] !== formatted[i]) break;
    if (normalized[i] === "\n") line++;
  }
  return line;
}
