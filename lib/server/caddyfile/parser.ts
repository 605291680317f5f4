/**
 * The Gatehousefile parser: tokens → server blocks. A server block is its keys (site
 * addresses, or none for the global options block) and its segments (one per directive: the
 * directive's line plus the block it opens). Snippets `(name) { ... }` are stored for
 * `import`, named routes `&(name) { ... }` become blocks marked `isNamedRoute`, and `import`
 * splices files, globs and snippets in place (see `imports.ts`).
 *
 * @module
 */
import { Dispenser, type GatehousefileError, siteError } from "./dispenser.ts";
import { type FileSource, localFiles } from "./files.ts";
import { doImport, ImportGraph } from "./imports.ts";
import {
  type EnvLookup,
  isCloseBrace,
  isOpenBrace,
  LexError,
  processEnv,
  replaceEnvVars,
  type Token,
  tokenize,
} from "./lexer.ts";

/** Deepest block nesting accepted (deeper input is refused, not recursed into). */
export const MAX_NESTING = 100;

/** A directive's tokens: its line and the block it opens, if any. */
export type Segment = Token[];

/** A site (or the global options block, or a named route) with its directives. */
export interface ServerBlock {
  /** True when the block was written with braces. */
  hasBraces: boolean;
  /** Site addresses (or the route name for named routes); empty for global options. */
  keys: Token[];
  /** One segment per directive, in order. */
  segments: Segment[];
  /** True for a named route `&(name) { ... }`. */
  isNamedRoute: boolean;
}

/** A warning noticed while parsing (e.g. an import glob that matched no file). */
export interface ParseWarning {
  /** What is wrong. */
  message: string;
  /** Where, when known. */
  file?: string;
  /** Line, when known. */
  line?: number;
}

/** Options of {@linkcode parseGatehousefile}. */
export interface ParseOptions {
  /** Environment lookup for `{$VAR}` (default: the process environment). */
  env?: EnvLookup;
  /** File access for `import` (default: the local file system). */
  files?: FileSource;
  /** Receives warnings; default: dropped. */
  warn?: (w: ParseWarning) => void;
}

/**
 * Lexes a file's text after env substitution; lexer errors become Gatehousefile errors
 * that start with `<file>:<line>: `.
 */
export function allTokens(filename: string, input: string, env: EnvLookup): Token[] {
  try {
    return tokenize(replaceEnvVars(input, env), filename);
  } catch (e) {
    if (e instanceof LexError) throw siteError({ file: filename, line: e.line }, e.message);
    throw e;
  }
}

/**
 * Parses a Gatehousefile into server blocks, in order.
 *
 * @example
 * ```ts
 * import { parseGatehousefile } from "./parser.ts";
 * const blocks = parseGatehousefile("Gatehousefile", "example.com {\n\trespond hi\n}\n");
 * blocks[0].keys[0].text; // "example.com"
 * blocks[0].segments[0].map((t) => t.text); // ["respond", "hi"]
 * ```
 */
export function parseGatehousefile(
  filename: string,
  input: string,
  options: ParseOptions = {},
): ServerBlock[] {
  const env = options.env ?? processEnv;
  const parser = new Parser(allTokens(filename, input, env), {
    env,
    files: options.files ?? localFiles,
    warn: options.warn ?? (() => {}),
  });
  return parser.parseAll();
}

/** The parser state; `imports.ts` splices tokens through it. */
export class Parser extends Dispenser {
  /** The block being parsed. */
  block: ServerBlock = newBlock();
  /** Set when the input ended in the middle of the site addresses. */
  eof = false;
  /** Snippets defined so far, by name. */
  snippets = new Map<string, Token[]>();
  /** Depth of braces inside the current directive. */
  braceDepth = 0;
  /** Imports seen, for cycle detection. */
  importGraph: ImportGraph = new ImportGraph();
  /** Environment lookup, for imported files. */
  readonly env: EnvLookup;
  /** File access, for imports. */
  readonly files: FileSource;
  /** Warning sink. */
  readonly warn: (w: ParseWarning) => void;

  /** A parser over `tokens`. */
  constructor(
    tokens: Token[],
    opts: { env: EnvLookup; files: FileSource; warn: (w: ParseWarning) => void },
  ) {
    super(tokens);
    this.env = opts.env;
    this.files = opts.files;
    this.warn = opts.warn;
  }

  /** Parses every server block. */
  parseAll(): ServerBlock[] {
    const blocks: ServerBlock[] = [];
    while (this.next()) {
      this.block = newBlock();
      this.begin();
      if (this.block.keys.length > 0 || this.block.segments.length > 0) blocks.push(this.block);
    }
    return blocks;
  }

  private begin(): void {
    if (this.tokens.length === 0) return;
    this.addresses();
    if (this.eof) return; // only a line of addresses
    const keys = this.block.keys;
    if (keys.length === 1 && keys[0].text.startsWith("&(") && keys[0].text.endsWith(")")) {
      const nameToken = { ...this.token(), text: keys[0].text.slice(2, -1) };
      this.block.keys = [nameToken];
      this.block.isNamedRoute = true;
      this.block.segments = [[nameToken, ...this.blockTokens(true)]];
      return;
    }
    if (keys.length === 1 && keys[0].text.startsWith("(") && keys[0].text.endsWith(")")) {
      const name = keys[0].text.slice(1, -1);
      if (this.snippets.has(name)) {
        throw this.err(`redeclaration of previously declared snippet ${name}`);
      }
      const tokens = this.blockTokens(false).map((t) => ({ ...t, snippetName: name }));
      this.snippets.set(name, tokens);
      this.block.keys = [];
      return;
    }
    this.blockContents();
  }

  private addresses(): void {
    let expectingAnother = false;
    for (;;) {
      let value = this.val();
      const token = this.token();
      if (value.startsWith("@")) {
        throw this.err(
          `request matchers may not be defined globally, they must be in a site block; found ${value}`,
        );
      }
      if (value === "import" && this.isNewLine()) {
        doImport(this, 0);
        continue;
      }
      if (isOpenBrace(token)) {
        if (expectingAnother) {
          throw this.err(`Expected another address but had '${value}' - check for extra comma`);
        }
        this.block.hasBraces = true;
        break;
      }
      if (value.endsWith("{") && token.quote === "") {
        throw this.err(
          `Site addresses cannot end with a curly brace: '${value}' - put a space between the token and the brace`,
        );
      }
      if (value !== "") {
        if (value.endsWith(",")) {
          value = value.slice(0, -1);
          expectingAnother = true;
        } else expectingAnother = false;
        if (value.includes(",")) {
          throw this.err(
            `Site addresses cannot contain a comma ',': '${value}' - put a space after the comma to separate site addresses`,
          );
        }
        if (value !== "") this.block.keys.push({ ...token, text: value });
      }
      const hasNext = this.next();
      if (expectingAnother && !hasNext) throw this.eofErr();
      if (!hasNext) {
        this.eof = true;
        break;
      }
      if (!expectingAnother && this.isNewLine()) break;
    }
  }

  private blockContents(): void {
    const braced = this.openBraceError() === undefined;
    if (!braced) this.cursor--; // a single site needs no braces
    this.directives();
    if (braced && !isCloseBrace(this.token())) throw this.syntaxErr("}");
  }

  private directives(): void {
    while (this.next()) {
      if (isCloseBrace(this.token())) break;
      if (this.val() === "import") {
        doImport(this, 1);
        this.cursor--;
        continue;
      }
      this.directive();
    }
  }

  private directive(): void {
    const segment: Segment = [this.token()];
    while (this.next()) {
      const t = this.token();
      if (isOpenBrace(t)) {
        this.braceDepth++;
        if (this.braceDepth > MAX_NESTING) {
          throw this.err(`blocks are nested too deeply (more than ${MAX_NESTING} levels)`);
        }
        if (!this.isNextOnNewLine()) throw this.err("Unexpected next token after '{' on same line");
        if (this.isNewLine()) {
          throw this.err(
            "Unexpected '{' on a new line; did you mean to place the '{' on the previous line?",
          );
        }
      } else if (t.text === "{}" && t.quote === "") {
        if (this.isNextOnNewLine()) throw this.err("Unexpected '{}' at end of line");
      } else if (this.isNewLine() && this.braceDepth === 0) {
        this.cursor--;
        break;
      } else if (isCloseBrace(t) && this.braceDepth > 0) {
        this.braceDepth--;
      } else if (isCloseBrace(t) && this.braceDepth === 0) {
        throw this.err("Unexpected '}' because no matching opening brace");
      } else if (t.text === "import" && this.isNewLine()) {
        doImport(this, 1);
        this.cursor--;
        continue;
      }
      segment.push(this.token());
    }
    this.block.segments.push(segment);
    if (this.braceDepth > 0) throw this.eofErr();
  }

  /** The error for a missing `{` at the current token, or undefined when it is one. */
  private openBraceError(): GatehousefileError | undefined {
    if (isOpenBrace(this.token())) return undefined;
    const keys = this.block.keys;
    if (
      this.val() === "import" && keys.length > 0 &&
      keys.every((k) => k.text.startsWith("(") && k.text.endsWith(")"))
    ) {
      return this.err(
        "global options block must appear before import directives; move the global options block to the top of the Caddyfile",
      );
    }
    return this.syntaxErr("{");
  }

  /** The tokens of the block that opens here (braces kept when `retainBraces`). */
  private blockTokens(retainBraces: boolean): Token[] {
    const e = this.openBraceError();
    if (e) throw e;
    let depth = 1;
    const tokens: Token[] = retainBraces ? [this.token()] : [];
    while (this.next()) {
      if (isCloseBrace(this.token())) {
        depth--;
        if (depth === 0) {
          if (retainBraces) tokens.push(this.token());
          break;
        }
      }
      if (isOpenBrace(this.token())) depth++;
      tokens.push(this.token());
    }
    if (depth !== 0) throw this.syntaxErr("}");
    return tokens;
  }
}

function newBlock(): ServerBlock {
  return { hasBraces: false, keys: [], segments: [], isNamedRoute: false };
}

/** The texts of a block's keys. */
export function keyTexts(block: ServerBlock): string[] {
  return block.keys.map((k) => k.text);
}
