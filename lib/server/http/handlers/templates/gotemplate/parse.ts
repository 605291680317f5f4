/**
 * The parser of Go's `text/template` (`text/template/parse/parse.go`): tokens from lex.ts to
 * the trees of node.ts, one per template (`define` and `block` add more), with Go's checks and
 * messages (`template: <name>:<line>: ...`): undefined variables and functions, `break` and
 * `continue` outside `range`, `else if` and `else with` chains, non-executable pipeline
 * stages, Go's number and string literals.
 *
 * @module
 */
import { TemplateError } from "./error.ts";
import { type Item, itemString, type ItemType, Lexer } from "./lex.ts";
import { quote } from "./fmt.ts";
import {
  type ArgNode,
  type BranchNode,
  type CommandNode,
  isEmptyTree,
  type ListNode,
  type Node,
  nodeString,
  type NumberNode,
  type PipeNode,
  type TemplateNode,
  type TreeInfo,
  type VariableNode,
} from "./node.ts";

/** One parsed template. */
export interface Tree extends TreeInfo {
  /** The template's name (`define` names its own). */
  name: string;
  /** Its body; null when it failed to parse. */
  root: ListNode | null;
}

/** Parse options: the delimiters, and the function names the template may call. */
export interface ParseOptions {
  left?: string;
  right?: string;
  /** True when a function of that name exists. */
  hasFunction(name: string): boolean;
}

class Bail {
  constructor(readonly error: TemplateError) {}
}

/**
 * Parses a template's text: the trees it defines, by name (the text itself under `name`).
 * Throws a {@linkcode TemplateError}.
 *
 * @example
 * ```ts
 * import { parse } from "./parse.ts";
 * const trees = parse("page", "{{define \"x\"}}X{{end}}{{template \"x\"}}", { hasFunction: () => false });
 * trees.size; // 2
 * ```
 */
export function parse(name: string, text: string, options: ParseOptions): Map<string, Tree> {
  const trees = new Map<string, Tree>();
  const lexer = new Lexer(text, options.left, options.right);
  const shared: Shared = { lexer, trees, options, text, parseName: name, buf: [], line: 1 };
  const p = new Parser(name, shared);
  try {
    p.parseTop();
    p.add();
  } catch (e) {
    if (e instanceof Bail) throw e.error;
    if (e instanceof RangeError) {
      throw new TemplateError(`template: ${name}: template nested too deeply`, "parse");
    }
    throw e;
  }
  return trees;
}

interface Shared {
  lexer: Lexer;
  trees: Map<string, Tree>;
  options: ParseOptions;
  text: string;
  parseName: string;
  /** Tokens read ahead and put back (a stack). */
  buf: Item[];
  /** The line of the last token read from the lexer (where errors are). */
  line: number;
}

class Parser {
  tree: Tree;
  #s: Shared;
  #actionLine = 0;
  #vars: string[] = ["$"];
  #rangeDepth = 0;
  #depth = 0;

  constructor(name: string, s: Shared) {
    this.#s = s;
    this.tree = { name, parseName: s.parseName, text: s.text, root: null };
  }

  // --- tokens

  next(): Item {
    if (this.#s.buf.length) return this.#s.buf.pop()!;
    const i = this.#s.lexer.next();
    this.#s.line = i.line;
    return i;
  }
  backup(i: Item): void {
    this.#s.buf.push(i);
  }
  peek(): Item {
    const i = this.next();
    this.backup(i);
    return i;
  }
  nextNonSpace(): Item {
    let i: Item;
    do i = this.next(); while (i.typ === "space");
    return i;
  }
  peekNonSpace(): Item {
    const i = this.nextNonSpace();
    this.backup(i);
    return i;
  }

  errorf(msg: string): never {
    this.tree.root = null;
    throw new Bail(
      new TemplateError(`template: ${this.#s.parseName}:${this.#s.line}: ${msg}`, "parse"),
    );
  }
  unexpected(i: Item, context: string): never {
    if (i.typ === "error") {
      let extra = "";
      if (this.#actionLine !== 0 && this.#actionLine !== i.line) {
        extra = ` in action started at ${this.#s.parseName}:${this.#actionLine}`;
        if (i.val.endsWith(" action")) extra = extra.slice(" in action".length);
      }
      this.errorf(`${itemString(i)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(i)} in ${context}`);
  }
  expect(typ: ItemType, context: string): Item {
    const i = this.nextNonSpace();
    if (i.typ !== typ) this.unexpected(i, context);
    return i;
  }
  expectOneOf(a: ItemType, b: ItemType, context: string): Item {
    const i = this.nextNonSpace();
    if (i.typ !== a && i.typ !== b) this.unexpected(i, context);
    return i;
  }

  #info() {
    return this.tree;
  }

  // --- structure

  add(): void {
    const trees = this.#s.trees;
    const old = trees.get(this.tree.name);
    if (!old || isEmptyTree(old.root)) {
      trees.set(this.tree.name, this.tree);
      return;
    }
    if (!isEmptyTree(this.tree.root)) {
      this.errorf(`template: multiple definition of template ${quote(this.tree.name)}`);
    }
  }

  parseTop(): void {
    this.tree.root = this.#list(this.peek().pos);
    while (this.peek().typ !== "eof") {
      if (this.peek().typ === "leftDelim") {
        const delim = this.next();
        const n = this.nextNonSpace();
        if (n.typ === "define") {
          new Parser("definition", this.#s).parseDefinition();
          continue;
        }
        this.backup(n);
        this.backup(delim);
      }
      const n = this.textOrAction();
      if (n.type === "end" || n.type === "else") this.errorf(`unexpected ${nodeString(n)}`);
      this.tree.root!.nodes.push(n);
    }
  }

  parseDefinition(): void {
    const context = "define clause";
    const name = this.expectOneOf("string", "rawString", context);
    this.tree.name = this.unquote(name.val);
    this.expect("rightDelim", context);
    const [list, end] = this.itemList();
    this.tree.root = list;
    if (end.type !== "end") this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  #list(pos: number): ListNode {
    return { type: "list", pos, tree: this.#info(), nodes: [] };
  }

  itemList(): [ListNode, Node] {
    if (++this.#depth > 1000) this.errorf("template nested too deeply");
    const list = this.#list(this.peekNonSpace().pos);
    while (this.peekNonSpace().typ !== "eof") {
      const n = this.textOrAction();
      if (n.type === "end" || n.type === "else") {
        this.#depth--;
        return [list, n];
      }
      list.nodes.push(n);
    }
    this.errorf("unexpected EOF");
  }

  textOrAction(): Node {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case "text":
        return { type: "text", pos: t.pos, tree: this.#info(), text: t.val };
      case "leftDelim":
        this.#actionLine = t.line;
        try {
          return this.action();
        } finally {
          this.#actionLine = 0;
        }
      case "comment":
        return { type: "comment", pos: t.pos, tree: this.#info(), text: t.val };
    }
    this.unexpected(t, "input");
  }

  action(): Node {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case "block":
        return this.blockControl();
      case "break":
      case "continue":
        return this.loopControl(t);
      case "else":
        return this.elseControl();
      case "end":
        return { type: "end", pos: this.expect("rightDelim", "end").pos, tree: this.#info() };
      case "if":
        return this.branch("if");
      case "range":
        return this.branch("range");
      case "template":
        return this.templateControl();
      case "with":
        return this.branch("with");
    }
    this.backup(t);
    const tok = this.peek();
    return {
      type: "action",
      pos: tok.pos,
      line: tok.line,
      tree: this.#info(),
      pipe: this.pipeline("command", "rightDelim"),
    };
  }

  loopControl(t: Item): Node {
    const n = this.nextNonSpace();
    if (n.typ !== "rightDelim") this.unexpected(n, `{{${t.val}}}`);
    if (this.#rangeDepth === 0) this.errorf(`{{${t.val}}} outside {{range}}`);
    return { type: t.typ as "break" | "continue", pos: t.pos, tree: this.#info() };
  }

  elseControl(): Node {
    const peek = this.peekNonSpace();
    if (peek.typ === "if" || peek.typ === "with") {
      return { type: "else", pos: peek.pos, tree: this.#info() };
    }
    const t = this.expect("rightDelim", "else");
    return { type: "else", pos: t.pos, tree: this.#info() };
  }

  branch(context: "if" | "range" | "with"): BranchNode {
    const mark = this.#vars.length;
    const pipe = this.pipeline(context, "rightDelim");
    if (context === "range") this.#rangeDepth++;
    let [list, next] = this.itemList();
    if (context === "range") this.#rangeDepth--;
    let elseList: ListNode | null = null;
    if (next.type === "else") {
      const p = this.peek().typ;
      if ((context === "if" && p === "if") || (context === "with" && p === "with")) {
        this.next();
        elseList = this.#list(next.pos);
        elseList.nodes.push(this.branch(context));
      } else {
        [elseList, next] = this.itemList();
        if (next.type !== "end") this.errorf(`expected end; found ${nodeString(next)}`);
      }
    }
    this.#vars.length = mark;
    return {
      type: context,
      pos: pipe.pos,
      line: pipe.line,
      tree: this.#info(),
      pipe,
      list,
      elseList,
    };
  }

  templateName(t: Item, context: string): string {
    if (t.typ === "string" || t.typ === "rawString") return this.unquote(t.val);
    this.unexpected(t, context);
  }

  templateControl(): TemplateNode {
    const context = "template clause";
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    let pipe: PipeNode | null = null;
    const n = this.nextNonSpace();
    if (n.typ !== "rightDelim") {
      this.backup(n);
      pipe = this.pipeline(context, "rightDelim");
    }
    return { type: "template", pos: t.pos, line: t.line, tree: this.#info(), name, pipe };
  }

  blockControl(): TemplateNode {
    const context = "block clause";
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    const pipe = this.pipeline(context, "rightDelim");
    const sub = new Parser(name, this.#s);
    const [list, end] = sub.itemList();
    sub.tree.root = list;
    if (end.type !== "end") this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    sub.add();
    return { type: "template", pos: t.pos, line: t.line, tree: this.#info(), name, pipe };
  }

  // --- pipelines

  pipeline(context: string, end: ItemType): PipeNode {
    const tok = this.peekNonSpace();
    const pipe: PipeNode = {
      type: "pipe",
      pos: tok.pos,
      line: tok.line,
      tree: this.#info(),
      isAssign: false,
      decl: [],
      cmds: [],
    };
    decls: for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== "variable") break;
      this.next();
      const after = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === "assign" || next.typ === "declare") {
        pipe.isAssign = next.typ === "assign";
        this.nextNonSpace();
        pipe.decl.push(this.#variable(v.pos, v.val));
        this.#vars.push(v.val);
      } else if (next.typ === "char" && next.val === ",") {
        this.nextNonSpace();
        pipe.decl.push(this.#variable(v.pos, v.val));
        this.#vars.push(v.val);
        if (context === "range" && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === "variable" || p === "rightDelim" || p === "rightParen") continue decls;
          this.errorf("range can only initialize variables");
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (after.typ === "space") {
        // put back the variable and the space after it: it is an argument
        this.backup(after);
        this.backup(v);
      } else {
        this.backup(v);
      }
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.typ === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (t.typ) {
        case "bool":
        case "charconst":
        case "complex":
        case "dot":
        case "field":
        case "identifier":
        case "number":
        case "nil":
        case "rawString":
        case "string":
        case "variable":
        case "leftParen":
          this.backup(t);
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0].type;
      if (t === "bool" || t === "dot" || t === "nil" || t === "number" || t === "string") {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  command(): CommandNode {
    const cmd: CommandNode = {
      type: "command",
      pos: this.peekNonSpace().pos,
      tree: this.#info(),
      args: [],
    };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      if (t.typ === "space") continue;
      if (t.typ === "rightDelim" || t.typ === "rightParen") this.backup(t);
      else if (t.typ !== "pipe") this.unexpected(t, "operand");
      break;
    }
    if (cmd.args.length === 0) this.errorf("empty command");
    return cmd;
  }

  operand(): ArgNode | null {
    const node = this.term();
    if (!node) return null;
    if (this.peek().typ !== "field") return node;
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().typ === "field") fields.push(this.next().val.slice(1));
    switch (node.type) {
      case "field":
        return { type: "field", pos, tree: this.#info(), ident: [...node.ident, ...fields] };
      case "variable":
        return { type: "variable", pos, tree: this.#info(), ident: [...node.ident, ...fields] };
      case "bool":
      case "string":
      case "number":
      case "nil":
      case "dot":
        this.errorf(`unexpected . after term ${quote(nodeString(node))}`);
    }
    return { type: "chain", pos, tree: this.#info(), node, field: fields };
  }

  term(): ArgNode | null {
    const t = this.nextNonSpace();
    const at = { pos: t.pos, tree: this.#info() };
    switch (t.typ) {
      case "identifier":
        if (!this.#s.options.hasFunction(t.val)) {
          this.errorf(`function ${quote(t.val)} not defined`);
        }
        return { type: "identifier", ...at, ident: t.val };
      case "dot":
        return { type: "dot", ...at };
      case "nil":
        return { type: "nil", ...at };
      case "variable":
        return this.useVar(t.pos, t.val);
      case "field":
        return { type: "field", ...at, ident: t.val.slice(1).split(".") };
      case "bool":
        return { type: "bool", ...at, value: t.val === "true" };
      case "charconst":
      case "complex":
      case "number":
        return this.number(t);
      case "leftParen":
        if (++this.#depth > 1000) this.errorf("template nested too deeply");
        try {
          return this.pipeline("parenthesized pipeline", "rightParen");
        } finally {
          this.#depth--;
        }
      case "string":
      case "rawString":
        return { type: "string", ...at, quoted: t.val, text: this.unquote(t.val) };
    }
    this.backup(t);
    return null;
  }

  #variable(pos: number, name: string): VariableNode {
    return { type: "variable", pos, tree: this.#info(), ident: name.split(".") };
  }

  useVar(pos: number, name: string): VariableNode {
    const v = this.#variable(pos, name);
    if (!this.#vars.includes(v.ident[0])) this.errorf(`undefined variable ${quote(v.ident[0])}`);
    return v;
  }

  unquote(s: string): string {
    const u = unquote(s);
    if (u === null) this.errorf("invalid syntax");
    return u;
  }

  number(t: Item): NumberNode {
    const n = parseNumber(t);
    if (typeof n === "string") this.errorf(n);
    return { ...n, tree: this.#info() };
  }
}

// --- literals

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
};

/** Go's `strconv.UnquoteChar`: [the character, the rest], or null for a bad escape. */
function unquoteChar(s: string, q: string): [string, string] | null {
  const c = String.fromCodePoint(s.codePointAt(0)!);
  if (c === q && (q === "'" || q === '"')) return null;
  if (c !== "\\") return [c, s.slice(c.length)];
  const e = s[1];
  if (e === undefined) return null;
  if (Object.hasOwn(SIMPLE_ESCAPES, e)) return [SIMPLE_ESCAPES[e], s.slice(2)];
  if (e === "'" || e === '"') return e === q ? [e, s.slice(2)] : null;
  if (e === "x" || e === "u" || e === "U") {
    const n = e === "x" ? 2 : e === "u" ? 4 : 8;
    const h = s.slice(2, 2 + n);
    if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) return null;
    const v = parseInt(h, 16);
    if (e === "x") return [String.fromCharCode(v), s.slice(2 + n)];
    if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return null;
    return [String.fromCodePoint(v), s.slice(2 + n)];
  }
  if (e >= "0" && e <= "7") {
    const o = s.slice(1, 4);
    if (!/^[0-7]{3}$/.test(o)) return null;
    const v = parseInt(o, 8);
    if (v > 255) return null;
    return [String.fromCharCode(v), s.slice(4)];
  }
  return null;
}

/** Go's `strconv.Unquote` for `"..."`, `` `...` `` and `'.'`; null when it is not valid. */
export function unquote(s: string): string | null {
  if (s.length < 2) return null;
  const q = s[0];
  if (q !== s[s.length - 1]) return null;
  const body = s.slice(1, -1);
  if (q === "`") return body.includes("`") ? null : body.replaceAll("\r", "");
  if (q !== '"' && q !== "'") return null;
  if (body.includes("\n")) return null;
  let out = "";
  let rest = body;
  while (rest.length > 0) {
    const r = unquoteChar(rest, q);
    if (!r) return null;
    out += r[0];
    rest = r[1];
    if (q === "'" && rest.length > 0) return null;
  }
  if (q === "'" && out.length === 0) return null;
  return out;
}

function underscoreOK(s: string): boolean {
  let saw = "^";
  let i = 0;
  if (s[0] === "-" || s[0] === "+") s = s.slice(1);
  let hexa = false;
  if (s.length >= 2 && s[0] === "0" && "bBoOxX".includes(s[1])) {
    i = 2;
    saw = "0";
    hexa = s[1] === "x" || s[1] === "X";
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if ((c >= "0" && c <= "9") || (hexa && /[a-fA-F]/.test(c))) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** Go's `strconv.ParseUint(s, 0, 64)`; null on error. */
function parseUint(s: string): bigint | null {
  if (s === "" || s[0] === "+" || s[0] === "-") return null;
  if (s.includes("_") && !underscoreOK(s)) return null;
  const t = s.replaceAll("_", "");
  let digits = t;
  let base = 10;
  if (/^0[xX]/.test(t)) [base, digits] = [16, t.slice(2)];
  else if (/^0[oO]/.test(t)) [base, digits] = [8, t.slice(2)];
  else if (/^0[bB]/.test(t)) [base, digits] = [2, t.slice(2)];
  else if (t.length > 1 && t[0] === "0") [base, digits] = [8, t.slice(1)];
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base]!;
  if (!valid.test(digits)) return null;
  let v = 0n;
  const b = BigInt(base);
  for (const d of digits) v = v * b + BigInt(parseInt(d, base));
  return v > UINT64_MAX ? null : v;
}

/** Go's `strconv.ParseInt(s, 0, 64)`; null on error. */
function parseInt64(s: string): bigint | null {
  let neg = false;
  let t = s;
  if (t[0] === "+" || t[0] === "-") {
    neg = t[0] === "-";
    t = t.slice(1);
  }
  const u = parseUint(t);
  if (u === null) return null;
  if (neg ? u > INT64_MAX + 1n : u > INT64_MAX) return null;
  return neg ? -u : u;
}

/** Go's `strconv.ParseFloat(s, 64)` for what the lexer lets through; null on error. */
function parseFloat64(s: string): number | null {
  if (s.includes("_") && !underscoreOK(s)) return null;
  let t = s.replaceAll("_", "");
  let sign = 1;
  if (t[0] === "+" || t[0] === "-") {
    sign = t[0] === "-" ? -1 : 1;
    t = t.slice(1);
  }
  const hexf = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(t);
  if (hexf) {
    const [, int, frac = "", exp] = hexf;
    if (int === "" && frac === "") return null;
    const mant = BigInt("0x" + (int + frac || "0"));
    const v = Number(mant) * 2 ** (Number(exp) - 4 * frac.length);
    return Number.isFinite(v) ? sign * v : null;
  }
  if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? sign * v : null;
}

/** Reads a number token as Go's parser does: every reading it fits, or an error message. */
export function parseNumber(t: Item): Omit<NumberNode, "tree"> | string {
  const n = {
    type: "number" as const,
    pos: t.pos,
    text: t.val,
    isInt: false,
    isUint: false,
    isFloat: false,
    int: 0n,
    uint: 0n,
    float: 0,
  };
  const text = t.val;
  if (t.typ === "charconst") {
    const r = unquoteChar(text.slice(1), text[0]);
    if (r === null) return "invalid syntax";
    if (r[1] !== "'") return `malformed character constant: ${text}`;
    const c = r[0];
    const cp = BigInt(c.codePointAt(0)!);
    return { ...n, isInt: true, isUint: true, isFloat: true, int: cp, uint: cp, float: Number(cp) };
  }
  if (t.typ === "complex" || text.endsWith("i")) return "complex numbers are not supported";
  const u = parseUint(text);
  if (u !== null) {
    n.isUint = true;
    n.uint = u;
  }
  const i = parseInt64(text);
  if (i !== null) {
    n.isInt = true;
    n.int = i;
    if (i === 0n) {
      n.isUint = true;
      n.uint = 0n;
    }
  }
  if (n.isInt) {
    n.isFloat = true;
    n.float = Number(n.int);
  } else if (n.isUint) {
    n.isFloat = true;
    n.float = Number(n.uint);
  } else {
    const f = parseFloat64(text);
    if (f !== null) {
      if (!/[.eEpP]/.test(text)) return `integer overflow: ${quote(text)}`;
      n.isFloat = true;
      n.float = f;
      if (Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
        n.isInt = true;
        n.int = BigInt(f);
      }
      if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
        n.isUint = true;
        n.uint = BigInt(f);
      }
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) return `illegal number syntax: ${quote(text)}`;
  return n;
}
