/**
 * `import`: replaces `import <pattern> [<args...>] [{ block }]` by the tokens of a snippet or
 * of the files a path or glob names, with `{args[...]}`, `{block}` and `{blocks.name}`
 * filled in. Imports are tracked in a graph so that a cycle is an error, not a hang.
 *
 * @module
 */
import { goBase, goDir, goJoin } from "../net/path.ts";
import { Dispenser } from "./dispenser.ts";
import { absPath, glob, GlobPatternError } from "./files.ts";
import { replaceArgs, variadicRange } from "./import_args.ts";
import { isCloseBrace, isNextOnNewLine, isOpenBrace, type Token } from "./lexer.ts";
import { allTokens, MAX_NESTING, type Parser } from "./parser.ts";

/** Which file or snippet imports which, to refuse cycles. */
export class ImportGraph {
  private nodes = new Set<string>();
  private edges = new Map<string, string[]>();

  /** Adds nodes. */
  addNodes(names: string[]): void {
    for (const n of names) this.nodes.add(n);
  }

  /** Removes nodes. */
  removeNodes(names: string[]): void {
    for (const n of names) this.nodes.delete(n);
  }

  /** Adds edges `from → to`; throws when one would close a cycle. */
  addEdges(from: string, tos: string[]): void {
    for (const to of tos) {
      if (!this.nodes.has(from) || !this.nodes.has(to)) {
        throw new Error("one of the nodes does not exist");
      }
      if (this.reaches(to, from)) {
        throw new Error(`a cycle of imports exists between ${from} and ${to}`);
      }
      const list = this.edges.get(from) ?? [];
      if (!list.includes(to)) {
        list.push(to);
        this.edges.set(from, list);
      }
    }
  }

  /** True when `to` is reachable from `from` by one or more edges. */
  private reaches(from: string, to: string): boolean {
    const seen = new Set<string>();
    const stack = [...(this.edges.get(from) ?? [])];
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...(this.edges.get(n) ?? []));
    }
    return seen.has(to);
  }
}

/**
 * Splices the import at the cursor (on the `import` token) out of `p.tokens` and the imported
 * tokens in; afterwards the cursor is on the token before the import, so `next()` lands on
 * the first imported token. `nesting` is 0 at the top level, 1 inside a block.
 */
export function doImport(p: Parser, nesting: number): void {
  const depth = (p.token().importDepth ?? 0) + 1;
  if (depth > MAX_NESTING) {
    throw p.err(`imports are nested too deeply (more than ${MAX_NESTING} levels)`);
  }
  if (!p.nextArg()) throw p.argErr();
  const pattern = p.val();
  if (pattern === "") throw p.err("Import requires a non-empty filepath");
  const args = p.remainingArgs();

  const blockTokens: Token[] = [];
  for (const n = p.nesting(); p.nextBlock(n);) blockTokens.push(p.token());
  const blockMapping = new Map<string, Token[]>();
  if (blockTokens.length > 0) {
    const bd = new Dispenser(blockTokens);
    while (bd.next()) {
      const key = bd.val();
      if (isOpenBrace(bd.token())) throw p.err("anonymous blocks are not supported");
      const mapped = bd.remainingArgsAsTokens();
      for (const n = bd.nesting(); bd.nextBlock(n);) mapped.push(bd.token());
      blockMapping.set(key, mapped);
    }
  }

  const start = p.cursor - 1 - args.length - blockTokens.length;
  const end = p.cursor + 1;
  let imported: Token[] = [];
  let nodes: string[] = [];

  const snippet = p.snippets.get(pattern);
  if (snippet) {
    imported = snippet;
    if (imported.length > 0) nodes = [`${imported[0].file}:${imported[0].snippetName}`];
  } else {
    const absFile = absPath(p.file(), p.files);
    const globPattern = pattern.startsWith("/") ? pattern : goJoin(goDir(absFile), pattern);
    if (
      count(globPattern, "*") > 1 || count(globPattern, "?") > 1 ||
      (globPattern.includes("[") && globPattern.includes("]"))
    ) {
      throw p.err(
        `Glob pattern may only contain one wildcard (*), but has others: ${globPattern}`,
      );
    }
    let matches: string[];
    try {
      matches = glob(globPattern, p.files);
    } catch (e) {
      if (e instanceof GlobPatternError) {
        throw p.err(`Failed to use import pattern ${pattern}: ${e.message}`);
      }
      throw e;
    }
    if (matches.length === 0) {
      if (/[*?[\]]/.test(globPattern)) {
        p.warn({
          message: `No files matching import glob pattern: ${pattern}`,
          file: p.file(),
          line: p.line(),
        });
      } else throw p.err(`File to import not found: ${pattern}`);
    } else if (goBase(globPattern).startsWith("*")) {
      matches = matches.filter((m) => !goBase(m).startsWith("."));
    }
    for (const f of matches) imported.push(...singleImport(p, f));
    nodes = matches;
  }

  let nodeName = p.file();
  if (p.token().snippetName !== "") nodeName += `:${p.token().snippetName}`;
  p.importGraph.addNodes([nodeName, ...nodes]);
  try {
    p.importGraph.addEdges(nodeName, nodes);
  } catch (e) {
    p.importGraph.removeNodes(nodes);
    throw p.err((e as Error).message);
  }

  const out: Token[] = [];
  let maybeSnippet = false, maybeSnippetId = false;
  let index = 0;
  const warn = (message: string, where?: { file?: string; line?: number }) =>
    p.warn({ message, ...where });
  for (let i = 0; i < imported.length; i++) {
    const token: Token = { ...imported[i], importDepth: depth };
    token.imports = [
      ...token.imports,
      token.snippetName !== ""
        ? `${p.file()}:${p.line()} (import ${token.snippetName})`
        : `${p.file()}:${p.line()} (import)`,
    ];
    // a snippet defined inside an imported file keeps its {block} and args for its own import
    if (!maybeSnippet && nesting === 0) {
      if (i === 0 || isNextOnNewLine(out[out.length - 1], token)) index = 0;
      else index++;
      if (
        index === 0 && token.text.length >= 3 && token.text.startsWith("(") &&
        token.text.endsWith(")")
      ) maybeSnippetId = true;
    }
    if (isOpenBrace(token)) {
      nesting++;
      if (index === 1 && maybeSnippetId && nesting === 1) {
        maybeSnippet = true;
        maybeSnippetId = false;
      }
    } else if (isCloseBrace(token)) {
      nesting--;
      if (nesting === 0 && maybeSnippet) maybeSnippet = false;
    }

    let blockReplacement: Token[] | undefined;
    if (token.text === "{block}") blockReplacement = blockTokens;
    else if (token.text.startsWith("{blocks.") && token.text.endsWith("}")) {
      blockReplacement = blockMapping.get(token.text.slice(8, -1)) ?? [];
    }
    if (blockReplacement) {
      if (maybeSnippet) out.push(token);
      else out.push(...blockReplacement);
      continue;
    }
    if (maybeSnippet) {
      out.push(token);
      continue;
    }
    const range = variadicRange(token, args.length, warn);
    if (range) {
      for (const arg of args.slice(range[0], range[1])) out.push({ ...token, text: arg });
    } else {
      // (warnings about a placeholder point at the line where it is written)
      const here = { file: token.file, line: token.line };
      token.text = replaceArgs(token.text, args, (m, where) => warn(m, where ?? here));
      out.push(token);
    }
  }

  spliceTokens(p.tokens, start, end - start, out);
  p.cursor -= args.length + blockTokens.length + 1;
}

/** Replaces `tokens[start, start+deleteCount)` by `items` in place (large lists too). */
function spliceTokens(tokens: Token[], start: number, deleteCount: number, items: Token[]): void {
  if (items.length < 10_000) {
    tokens.splice(start, deleteCount, ...items);
    return;
  }
  const tail = tokens.splice(start + deleteCount);
  tokens.length = start;
  for (const t of items) tokens.push(t);
  for (const t of tail) tokens.push(t);
}

function count(s: string, ch: string): number {
  return s.split(ch).length - 1;
}

/** The tokens of one imported file (absolute file names on every token). */
function singleImport(p: Parser, file: string): Token[] {
  const kind = p.files.stat(file);
  if (kind === undefined) throw p.err(`Could not import ${file}: no such file or directory`);
  if (kind === "dir") throw p.err(`Could not import ${file}: is a directory`);
  let input: string;
  try {
    input = p.files.readTextFile(file);
  } catch (e) {
    throw p.err(`Could not read imported file ${file}: ${(e as Error).message}`);
  }
  if (input.trim() === "") {
    p.warn({ message: `Import file is empty: ${file}`, file: p.file(), line: p.line() });
    return [];
  }
  let tokens: Token[];
  try {
    tokens = allTokens(file, input, p.env);
  } catch (e) {
    throw p.err(`Could not read tokens while importing ${file}: ${(e as Error).message}`);
  }
  const abs = absPath(file, p.files);
  for (const t of tokens) t.file = abs;
  return tokens;
}
