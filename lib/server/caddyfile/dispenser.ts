/**
 * The dispenser: a cursor over tokens that knows lines and blocks. Every directive, global
 * option and module syntax reads its tokens through one, so errors always name file:line.
 *
 * The cursor starts before the first token. The usual shape of a directive parser:
 *
 * ```ts ignore
 * d.next();                           // the directive name
 * const args = d.remainingArgs();     // the rest of its line
 * for (const n = d.nesting(); d.nextBlock(n);) {
 *   switch (d.val()) {                // each subdirective of its block
 *     case "root": if (!d.nextArg()) throw d.argErr(); root = d.val(); break;
 *     default: throw d.unknownSubdirective(["root"]);
 *   }
 * }
 * ```
 *
 * The method names and semantics follow Caddy's `caddyfile.Dispenser` one to one (`Next` →
 * `next`, `NextArg` → `nextArg`, `NextBlock` → `nextBlock`, `Args(&a, &b)` → `args(2)`,
 * `ArgErr` → `argErr`, `Err`/`Errf` → `err` with a template string, `DeleteN` → `deleteN`),
 * so a Caddy module's `UnmarshalCaddyfile` reads the same here. Every error carries
 * `, at <file>:<line>` (and the import chain), and `unknownSubdirective` adds "did you mean".
 * This API is stable: directive files build on it.
 *
 * @module
 */
import { isCloseBrace, isNextOnNewLine, isOpenBrace, type Token } from "./lexer.ts";
import { suggest } from "./suggest.ts";
import { ConfigError } from "../config/error.ts";
import { parseDuration } from "../config/duration.ts";

/**
 * An error in a Gatehousefile: the config error of the text format, whose path is
 * `<file>:<line>`; the message ends with `, at <file>:<line>` when known.
 */
export class GatehousefileError extends ConfigError {
  /** Stable code: always `gatehousefile`. */
  declare readonly code: "gatehousefile";
  /** The file of the offending token, when known. */
  readonly file?: string;
  /** The line of the offending token, when known. */
  readonly line?: number;
  /** Creates the error. */
  constructor(message: string, where?: { file?: string; line?: number }) {
    super("gatehousefile", message, {
      path: where?.file ? `${where.file}:${where.line ?? 0}` : "",
    });
    this.name = "GatehousefileError";
    this.file = where?.file;
    this.line = where?.line;
  }
}

const EMPTY: Token = {
  file: "",
  line: 0,
  text: "",
  quote: "",
  heredocMarker: "",
  imports: [],
  snippetName: "",
};

/** Context key under which a named matcher's name (without `@`) is given to matcher syntaxes. */
export const MATCHER_NAME_CONTEXT_KEY = "matcher_name";

/**
 * A cursor over a list of tokens.
 *
 * @example
 * ```ts
 * import { Dispenser } from "./dispenser.ts";
 * import { tokenize } from "./lexer.ts";
 * const d = new Dispenser(tokenize("respond /x 200 {\n\tclose\n}", "Gatehousefile"));
 * d.next(); // "respond"
 * d.remainingArgs(); // ["/x", "200"]
 * d.nextBlock(0) && d.val(); // "close"
 * ```
 */
export class Dispenser {
  /** The tokens (the parser splices imports into this list). */
  tokens: Token[];
  /** Index of the current token; -1 before the first. */
  cursor = -1;
  /** Current block depth, as tracked by {@linkcode Dispenser.nextBlock}. */
  protected depth = 0;
  private context?: Map<string, unknown>;

  /** A dispenser over `tokens`, positioned before the first. */
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  /** Loads the next token; false when there is none. */
  next(): boolean {
    if (this.cursor < this.tokens.length - 1) {
      this.cursor++;
      return true;
    }
    return false;
  }

  /** Steps back one token; true when the cursor is then on a token. */
  prev(): boolean {
    if (this.cursor > -1) {
      this.cursor--;
      return this.cursor > -1;
    }
    return false;
  }

  /**
   * Loads the next token if it is on the same line and is not an unquoted `{` (a quoted
   * brace is an ordinary argument). False when the line has no more arguments.
   */
  nextArg(): boolean {
    if (!this.nextOnSameLine()) return false;
    if (isOpenBrace(this.token())) {
      this.cursor--;
      return false;
    }
    return true;
  }

  private nextOnSameLine(): boolean {
    if (this.cursor < 0) {
      this.cursor++;
      return true;
    }
    if (this.cursor >= this.tokens.length - 1) return false;
    if (!isNextOnNewLine(this.tokens[this.cursor], this.tokens[this.cursor + 1])) {
      this.cursor++;
      return true;
    }
    return false;
  }

  /** Loads the next token only if it starts a new line. */
  nextLine(): boolean {
    if (this.cursor < 0) {
      this.cursor++;
      return true;
    }
    if (this.cursor >= this.tokens.length - 1) return false;
    if (isNextOnNewLine(this.tokens[this.cursor], this.tokens[this.cursor + 1])) {
      this.cursor++;
      return true;
    }
    return false;
  }

  /**
   * Loop condition over the tokens of a block: true while the next token opens a block (on
   * the same line) or is inside one deeper than `initialNesting`. The outermost braces are
   * consumed and not visited. Use as `for (const n = d.nesting(); d.nextBlock(n);) { ... }`.
   */
  nextBlock(initialNesting: number): boolean {
    if (this.depth > initialNesting) {
      if (!this.next()) return false;
      if (isCloseBrace(this.token()) && !this.nextOnSameLine()) this.depth--;
      else if (isOpenBrace(this.token()) && !this.nextOnSameLine()) this.depth++;
      return this.depth > initialNesting;
    }
    if (!this.nextOnSameLine()) return false;
    if (!isOpenBrace(this.token())) {
      this.cursor--;
      return false;
    }
    this.next();
    if (isCloseBrace(this.token())) return false;
    this.depth++;
    return true;
  }

  /** Current block depth (the argument `nextBlock` loops take). */
  nesting(): number {
    return this.depth;
  }

  /** Text of the current token ("" when none). */
  val(): string {
    return this.token().text;
  }

  /** Text of the current token with its quotes (heredocs without their marker). */
  valRaw(): string {
    const t = this.token();
    return t.quote !== "" && t.quote !== "<" ? t.quote + t.text + t.quote : t.text;
  }

  /** The current token as the nearest scalar: number, boolean or string (quoted: string). */
  scalarVal(): string | number | boolean | null {
    if (this.cursor < 0 || this.cursor >= this.tokens.length) return null;
    const t = this.tokens[this.cursor];
    if (t.quote !== "") return t.text;
    if (/^[+-]?\d+$/.test(t.text)) return Number(t.text);
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t.text)) return Number(t.text);
    if (/^(1|t|T|TRUE|true|True)$/.test(t.text)) return true;
    if (/^(0|f|F|FALSE|false|False)$/.test(t.text)) return false;
    return t.text;
  }

  /** Line of the current token (0 when none). */
  line(): number {
    return this.token().line;
  }

  /** File of the current token ("" when none). */
  file(): string {
    return this.token().file;
  }

  /** The current token (an empty one when none). */
  token(): Token {
    if (this.cursor < 0 || this.cursor >= this.tokens.length) return EMPTY;
    return this.tokens[this.cursor];
  }

  /**
   * Reads the next `count` arguments; undefined (and the cursor left after the ones read)
   * when the line has fewer.
   */
  args(count: number): string[] | undefined {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      if (!this.nextArg()) return undefined;
      out.push(this.val());
    }
    return out;
  }

  /** Like {@linkcode Dispenser.args} but the line must have exactly `count` arguments. */
  allArgs(count: number): string[] | undefined {
    const out = this.args(count);
    if (!out) return undefined;
    if (this.nextArg()) {
      this.prev();
      return undefined;
    }
    return out;
  }

  /** Counts the arguments left on the line without consuming them. */
  countRemainingArgs(): number {
    let n = 0;
    while (this.nextArg()) n++;
    for (let i = 0; i < n; i++) this.prev();
    return n;
  }

  /** The arguments left on the line (stops before an unquoted `{`). */
  remainingArgs(): string[] {
    const out: string[] = [];
    while (this.nextArg()) out.push(this.val());
    return out;
  }

  /** Like {@linkcode Dispenser.remainingArgs} but keeps the quotes. */
  remainingArgsRaw(): string[] {
    const out: string[] = [];
    while (this.nextArg()) out.push(this.valRaw());
    return out;
  }

  /** Like {@linkcode Dispenser.remainingArgs} but returns the tokens. */
  remainingArgsAsTokens(): Token[] {
    const out: Token[] = [];
    while (this.nextArg()) out.push(this.token());
    return out;
  }

  /**
   * The tokens from the current one to the end of its line, or of the block that opens at the
   * end of its line (braces included); the cursor ends on the last token returned.
   */
  nextSegment(): Token[] {
    const out: Token[] = [this.token()];
    while (this.nextArg()) out.push(this.token());
    let opened = false;
    for (const n = this.nesting(); this.nextBlock(n);) {
      if (!opened) {
        this.prev();
        out.push(this.token());
        this.next();
        opened = true;
      }
      out.push(this.token());
    }
    if (opened) out.push(this.token());
    return out;
  }

  /** A new dispenser over {@linkcode Dispenser.nextSegment}. */
  newFromNextSegment(): Dispenser {
    return new Dispenser(this.nextSegment());
  }

  /** Back to the start, as if unused. */
  reset(): void {
    this.cursor = -1;
    this.depth = 0;
  }

  /** Deletes the current token; the cursor moves back one. Returns the token list. */
  delete(): Token[] {
    if (this.cursor >= 0 && this.cursor <= this.tokens.length - 1) {
      this.tokens = [...this.tokens.slice(0, this.cursor), ...this.tokens.slice(this.cursor + 1)];
      this.cursor--;
    }
    return this.tokens;
  }

  /** Deletes the current token and the `amount - 1` before it; the cursor moves back. */
  deleteN(amount: number): Token[] {
    if (amount > 0 && this.cursor >= amount - 1 && this.cursor <= this.tokens.length - 1) {
      this.tokens = [
        ...this.tokens.slice(0, this.cursor - (amount - 1)),
        ...this.tokens.slice(this.cursor + 1),
      ];
      this.cursor -= amount;
    }
    return this.tokens;
  }

  /** Stores a value for the syntaxes that read this dispenser. */
  setContext(key: string, value: unknown): void {
    (this.context ??= new Map()).set(key, value);
  }

  /** A value stored with {@linkcode Dispenser.setContext}. */
  getContext(key: string): unknown {
    return this.context?.get(key);
  }

  /** True when the current token starts a line (or is the first). */
  isNewLine(): boolean {
    if (this.cursor < 1) return true;
    if (this.cursor > this.tokens.length - 1) return false;
    return isNextOnNewLine(this.tokens[this.cursor - 1], this.tokens[this.cursor]);
  }

  /** True when the next token starts a new line (or there is none). */
  isNextOnNewLine(): boolean {
    if (this.cursor < 0) return false;
    if (this.cursor >= this.tokens.length - 1) return true;
    return isNextOnNewLine(this.tokens[this.cursor], this.tokens[this.cursor + 1]);
  }

  // ---- values

  /**
   * Reads `text` (the current token unless given) as a Caddy duration, in nanoseconds; a
   * refusal is worded by `message(text, reason)` at this token, as Caddy words each
   * directive's (`bad timeout value 5x: time: unknown unit...`).
   */
  duration(message: (text: string, reason: string) => string, text: string = this.val()): number {
    try {
      return parseDuration(text);
    } catch (e) {
      throw this.err(message(text, (e as Error).message));
    }
  }

  // ---- errors

  /** "Wrong argument count" at the current token. */
  argErr(): GatehousefileError {
    if (isOpenBrace(this.token())) return this.err("unexpected token '{', expecting argument");
    return this.err(`wrong argument count or unexpected line ending after '${this.val()}'`);
  }

  /** "Unexpected token, expecting X". */
  syntaxErr(expected: string): GatehousefileError {
    return new GatehousefileError(
      `syntax error: unexpected token '${this.val()}', expecting '${expected}', at ${this.file()}:${this.line()} import chain: ['${
        this.token().imports.join("','")
      }']`,
      { file: this.file(), line: this.line() },
    );
  }

  /** "Unexpected EOF". */
  eofErr(): GatehousefileError {
    return this.err("unexpected EOF");
  }

  /**
   * An error with `message`, located at the current token (before the first token, after the
   * last one or on a placeholder token: at the nearest real one, so that it names a line).
   */
  err(message: string): GatehousefileError {
    const i = Math.min(Math.max(this.cursor, 0), this.tokens.length - 1);
    const here = (t?: Token) => t !== undefined && t.file !== "";
    const t = here(this.tokens[i])
      ? this.tokens[i]
      : this.tokens.slice(i).find(here) ?? this.tokens.slice(0, i).findLast(here);
    return t ? errorAt(t, message) : new GatehousefileError(message);
  }

  /**
   * An error for an unknown subdirective (the current token), with a "did you mean"
   * suggestion when one of `known` is close. `format` is the message, `%s` standing for the
   * name (default `unrecognized subdirective %s`).
   */
  unknownSubdirective(
    known: readonly string[],
    format = "unrecognized subdirective %s",
  ): GatehousefileError {
    return this.err(`${format.replace("%s", this.val())}${didYouMean(this.val(), known)}`);
  }
}

/** ` (did you mean 'x'?)` when a name of `known` is close to `name`, else "". */
export function didYouMean(name: string, known: Iterable<string>): string {
  const s = suggest(name, known);
  return s ? ` (did you mean '${s}'?)` : "";
}

/** Where a token came from: its file and line (and the imports that brought it in). */
export type Where = Pick<Token, "file" | "line"> & { imports?: string[] };

/**
 * An error with `message` located at token `t`, as {@linkcode Dispenser.err} gives at the
 * current token: the message ends with `, at <file>:<line>` (and the import chain).
 *
 * @example
 * ```ts
 * import { errorAt } from "./dispenser.ts";
 * errorAt({ file: "Gatehousefile", line: 3 }, "bad").message; // "bad, at Gatehousefile:3"
 * ```
 */
export function errorAt(t: Where, message: string): GatehousefileError {
  const chain = t.imports?.length ? ` import chain ['${t.imports.join("','")}']` : "";
  return new GatehousefileError(`${message}, at ${t.file}:${t.line}${chain}`, t);
}

/**
 * An error about a site block or global option as a whole, located at token `t` the way
 * Caddy words these: `<file>:<line>: <message>`.
 *
 * @example
 * ```ts
 * import { siteError } from "./dispenser.ts";
 * siteError({ file: "Gatehousefile", line: 4 }, "ambiguous site definition: a.com").message;
 * // "Gatehousefile:4: ambiguous site definition: a.com"
 * ```
 */
export function siteError(t: Where, message: string): GatehousefileError {
  return new GatehousefileError(`${t.file}:${t.line}: ${message}`, t);
}

/**
 * `e` with `context` put before its message (after a leading `<file>:<line>: `, which stays
 * first), located at `t` when `e` names no location yet. The location of the innermost
 * error wins: it is the token that caused it.
 *
 * @example
 * ```ts
 * import { siteError, withContext } from "./dispenser.ts";
 * const e = siteError({ file: "G", line: 2 }, "cannot use duplicate server name 'a'");
 * withContext(e, "applying global server options: ").message;
 * // "G:2: applying global server options: cannot use duplicate server name 'a'"
 * ```
 */
export function withContext(e: unknown, context: string, t?: Where): GatehousefileError {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof GatehousefileError && e.file !== undefined && e.line !== undefined) {
    const lead = `${e.file}:${e.line}: `;
    const text = message.startsWith(lead)
      ? lead + context + message.slice(lead.length)
      : context + message;
    return new GatehousefileError(text, { file: e.file, line: e.line });
  }
  const at = /, at (\S+):(\d+)/.exec(message);
  if (at) return new GatehousefileError(context + message, { file: at[1], line: Number(at[2]) });
  if (!t) return new GatehousefileError(context + message);
  return errorAt(t, context + message);
}
