/**
 * The lexer of Go's `text/template` (`text/template/parse/lex.go`): text, actions between the
 * delimiters, trim markers (`{{- ` and ` -}}`), comments (slash-star to star-slash inside delimiters), and inside actions
 * Go's tokens. Errors are tokens (`error`), as Go's, so the parser reports them where they are.
 *
 * @module
 */
import { quote } from "./fmt.ts";

/** The kinds of tokens. */
export type ItemType =
  | "error"
  | "bool"
  | "char"
  | "charconst"
  | "comment"
  | "complex"
  | "assign"
  | "declare"
  | "eof"
  | "field"
  | "identifier"
  | "leftDelim"
  | "leftParen"
  | "number"
  | "pipe"
  | "rawString"
  | "rightDelim"
  | "rightParen"
  | "space"
  | "string"
  | "text"
  | "variable"
  // keywords
  | "block"
  | "break"
  | "continue"
  | "dot"
  | "define"
  | "else"
  | "end"
  | "if"
  | "range"
  | "nil"
  | "template"
  | "with";

/** One token: its kind, text, byte offset and line. */
export interface Item {
  typ: ItemType;
  /** Offset in the input (UTF-16 units; positions in messages count bytes on the line). */
  pos: number;
  val: string;
  line: number;
}

const KEYWORDS: ReadonlyMap<string, ItemType> = new Map(Object.entries({
  ".": "dot",
  block: "block",
  break: "break",
  continue: "continue",
  define: "define",
  else: "else",
  end: "end",
  if: "if",
  range: "range",
  nil: "nil",
  template: "template",
  with: "with",
}) as [string, ItemType][]);

/** True for the item types that are keywords. */
export function isKeyword(t: ItemType): boolean {
  return [...KEYWORDS.values()].includes(t);
}

/** How Go prints a token in messages (`item.String`). */
export function itemString(i: Item): string {
  if (i.typ === "eof") return "EOF";
  if (i.typ === "error") return i.val;
  if (isKeyword(i.typ)) return `<${i.val}>`;
  if ([...i.val].length > 10) return quote([...i.val].slice(0, 10).join("")) + "...";
  return quote(i.val);
}

const SPACE = " \t\r\n";
const isSpace = (c: string | undefined) => c !== undefined && c.length === 1 && SPACE.includes(c);
const ALNUM = /^[\p{L}\p{Nd}_]$/u;
const isAlphaNumeric = (c: string | undefined) => c !== undefined && ALNUM.test(c);

/** Go's `%#U` of a character (`U+0023 '#'`). */
function sharpU(c: string): string {
  const cp = c.codePointAt(0)!;
  const u = "U+" + cp.toString(16).toUpperCase().padStart(4, "0");
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(c) ? `${u} '${c}'` : u;
}

/** Tokenizes a template; `next()` hands out tokens one by one, ending with `eof` or `error`. */
export class Lexer {
  #input: string;
  #left: string;
  #right: string;
  #pos = 0;
  #start = 0;
  #line = 1;
  #startLine = 1;
  #items: Item[] = [];
  #insideAction = false;
  #parenDepth = 0;
  #done = false;

  constructor(input: string, left = "{{", right = "}}") {
    this.#input = input;
    this.#left = left || "{{";
    this.#right = right || "}}";
  }

  /** The next token. */
  next(): Item {
    while (this.#items.length === 0) {
      if (this.#done) return { typ: "eof", pos: this.#pos, val: "", line: this.#line };
      if (this.#insideAction) this.#lexInsideAction();
      else this.#lexText();
    }
    return this.#items.shift()!;
  }

  #emit(typ: ItemType): void {
    const val = this.#input.slice(this.#start, this.#pos);
    this.#items.push({ typ, pos: this.#start, val, line: this.#startLine });
    this.#line += count(val, "\n");
    this.#start = this.#pos;
    this.#startLine = this.#line;
  }

  #ignore(): void {
    this.#line += count(this.#input.slice(this.#start, this.#pos), "\n");
    this.#start = this.#pos;
    this.#startLine = this.#line;
  }

  #error(msg: string): void {
    this.#items.push({ typ: "error", pos: this.#start, val: msg, line: this.#startLine });
    this.#done = true;
  }

  #peek(): string | undefined {
    return this.#input[this.#pos];
  }

  #nextChar(): string | undefined {
    if (this.#pos >= this.#input.length) {
      this.#pos++;
      return undefined;
    }
    const cp = this.#input.codePointAt(this.#pos)!;
    const c = String.fromCodePoint(cp);
    this.#pos += c.length;
    return c;
  }

  #backup(c: string | undefined): void {
    this.#pos -= c === undefined ? 1 : c.length;
  }

  #accept(valid: string): boolean {
    const c = this.#input[this.#pos];
    if (c !== undefined && valid.includes(c)) {
      this.#pos++;
      return true;
    }
    return false;
  }

  #acceptRun(valid: string): void {
    while (this.#accept(valid));
  }

  #hasLeftTrim(at: number): boolean {
    return this.#input[at] === "-" && isSpace(this.#input[at + 1]);
  }

  #hasRightTrim(at: number): boolean {
    return isSpace(this.#input[at]) && this.#input[at + 1] === "-";
  }

  /** [at a right delimiter, with a trim marker]. */
  #atRightDelim(): [boolean, boolean] {
    if (this.#hasRightTrim(this.#pos) && this.#input.startsWith(this.#right, this.#pos + 2)) {
      return [true, true];
    }
    return [this.#input.startsWith(this.#right, this.#pos), false];
  }

  #lexText(): void {
    const x = this.#input.indexOf(this.#left, this.#pos);
    if (x < 0) {
      this.#pos = this.#input.length;
      if (this.#pos > this.#start) this.#emit("text");
      this.#items.push({ typ: "eof", pos: this.#pos, val: "", line: this.#line });
      this.#done = true;
      return;
    }
    if (x > this.#pos || x > this.#start) {
      this.#pos = x;
      let trim = 0;
      if (this.#hasLeftTrim(x + this.#left.length)) {
        const text = this.#input.slice(this.#start, x);
        trim = text.length - trimRight(text).length;
      }
      this.#pos = x - trim;
      if (this.#pos > this.#start) this.#emit("text");
      this.#pos = x;
      this.#ignore();
    }
    this.#lexLeftDelim();
  }

  #lexLeftDelim(): void {
    this.#pos += this.#left.length;
    const trim = this.#hasLeftTrim(this.#pos);
    const after = trim ? 2 : 0;
    if (this.#input.startsWith("/*", this.#pos + after)) {
      this.#pos += after;
      this.#ignore();
      this.#lexComment();
      return;
    }
    this.#emit("leftDelim");
    this.#pos += after;
    this.#ignore();
    this.#insideAction = true;
    this.#parenDepth = 0;
  }

  #lexComment(): void {
    this.#pos += 2;
    const x = this.#input.indexOf("*/", this.#pos);
    if (x < 0) return this.#error("unclosed comment");
    this.#pos = x + 2;
    const [delim, trim] = this.#atRightDelim();
    if (!delim) return this.#error("comment ends before closing delimiter");
    if (trim) this.#pos += 2;
    this.#pos += this.#right.length;
    if (trim) this.#pos += leftTrimLength(this.#input.slice(this.#pos));
    this.#ignore();
  }

  #lexRightDelim(trim: boolean): void {
    if (trim) {
      this.#pos += 2;
      this.#ignore();
    }
    this.#pos += this.#right.length;
    this.#emit("rightDelim");
    if (trim) {
      this.#pos += leftTrimLength(this.#input.slice(this.#pos));
      this.#ignore();
    }
    this.#insideAction = false;
  }

  #lexInsideAction(): void {
    const [delim, trim] = this.#atRightDelim();
    if (delim) {
      if (this.#parenDepth === 0) return this.#lexRightDelim(trim);
      return this.#error("unclosed left paren");
    }
    const r = this.#nextChar();
    if (r === undefined) return this.#error("unclosed action");
    if (isSpace(r)) {
      this.#backup(r);
      return this.#lexSpace();
    }
    switch (r) {
      case "=":
        return this.#emit("assign");
      case ":":
        if (this.#nextChar() !== "=") return this.#error("expected :=");
        return this.#emit("declare");
      case "|":
        return this.#emit("pipe");
      case '"':
        return this.#lexQuote();
      case "`":
        return this.#lexRawQuote();
      case "$":
        return this.#lexFieldOrVariable("variable");
      case "'":
        return this.#lexChar();
      case "(":
        this.#parenDepth++;
        return this.#emit("leftParen");
      case ")":
        // Go 1.19 emits the paren before it finds it unbalanced
        this.#emit("rightParen");
        this.#parenDepth--;
        if (this.#parenDepth < 0) return this.#error("unexpected right paren U+0029 ')'");
        return;
    }
    if (r === ".") {
      const c = this.#peek();
      // at the end of the input "." is read as a number (and refused), as Go reads it
      if (c !== undefined && (c < "0" || c > "9")) return this.#lexFieldOrVariable("field");
    }
    if (r === "." || r === "+" || r === "-" || (r >= "0" && r <= "9")) {
      this.#backup(r);
      return this.#lexNumber();
    }
    if (isAlphaNumeric(r)) {
      this.#backup(r);
      return this.#lexIdentifier();
    }
    const cp = r.codePointAt(0)!;
    if (cp <= 0x7f && cp >= 0x20 && cp !== 0x7f) return this.#emit("char");
    return this.#error(`unrecognized character in action: ${sharpU(r)}`);
  }

  #lexSpace(): void {
    let n = 0;
    while (isSpace(this.#peek())) {
      this.#pos++;
      n++;
    }
    if (this.#hasRightTrim(this.#pos - 1) && this.#input.startsWith(this.#right, this.#pos + 1)) {
      this.#pos--;
      if (n === 1) return; // the space belongs to the trim marker
    }
    this.#emit("space");
  }

  #atTerminator(): boolean {
    const r = this.#peek();
    if (r === undefined || isSpace(r)) return true;
    if (".,|:()".includes(r)) return true;
    return this.#input.startsWith(this.#right, this.#pos);
  }

  #lexIdentifier(): void {
    for (;;) {
      const r = this.#nextChar();
      if (isAlphaNumeric(r)) continue;
      this.#backup(r);
      const word = this.#input.slice(this.#start, this.#pos);
      if (!this.#atTerminator()) return this.#error(`bad character ${sharpU(r ?? "\0")}`);
      const kw = KEYWORDS.get(word);
      if (kw && kw !== "dot") return this.#emit(kw);
      if (word === "true" || word === "false") return this.#emit("bool");
      return this.#emit("identifier");
    }
  }

  #lexFieldOrVariable(typ: "field" | "variable"): void {
    if (this.#atTerminator()) return this.#emit(typ === "variable" ? "variable" : "dot");
    let r: string | undefined;
    for (;;) {
      r = this.#nextChar();
      if (!isAlphaNumeric(r)) {
        this.#backup(r);
        break;
      }
    }
    if (!this.#atTerminator()) return this.#error(`bad character ${sharpU(r ?? "\0")}`);
    this.#emit(typ);
  }

  #lexChar(): void {
    for (;;) {
      const r = this.#nextChar();
      if (r === "\\") {
        const e = this.#nextChar();
        if (e !== undefined && e !== "\n") continue;
        return this.#error("unterminated character constant");
      }
      if (r === undefined || r === "\n") return this.#error("unterminated character constant");
      if (r === "'") break;
    }
    this.#emit("charconst");
  }

  #lexQuote(): void {
    for (;;) {
      const r = this.#nextChar();
      if (r === "\\") {
        const e = this.#nextChar();
        if (e !== undefined && e !== "\n") continue;
        return this.#error("unterminated quoted string");
      }
      if (r === undefined || r === "\n") return this.#error("unterminated quoted string");
      if (r === '"') break;
    }
    this.#emit("string");
  }

  #lexRawQuote(): void {
    const x = this.#input.indexOf("`", this.#pos);
    if (x < 0) {
      this.#pos = this.#input.length;
      return this.#error("unterminated raw quoted string");
    }
    this.#pos = x + 1;
    this.#emit("rawString");
  }

  #scanNumber(): boolean {
    this.#accept("+-");
    let digits = "0123456789_";
    if (this.#accept("0")) {
      if (this.#accept("xX")) digits = "0123456789abcdefABCDEF_";
      else if (this.#accept("oO")) digits = "01234567_";
      else if (this.#accept("bB")) digits = "01_";
    }
    this.#acceptRun(digits);
    if (this.#accept(".")) this.#acceptRun(digits);
    if (digits.length === 11 && this.#accept("eE")) {
      this.#accept("+-");
      this.#acceptRun("0123456789_");
    }
    if (digits.length === 23 && this.#accept("pP")) {
      this.#accept("+-");
      this.#acceptRun("0123456789_");
    }
    this.#accept("i");
    if (isAlphaNumeric(this.#peek())) {
      this.#nextChar();
      return false;
    }
    return true;
  }

  #lexNumber(): void {
    const bad = () =>
      this.#error(`bad number syntax: ${quote(this.#input.slice(this.#start, this.#pos))}`);
    if (!this.#scanNumber()) return bad();
    const sign = this.#peek();
    if (sign === "+" || sign === "-") {
      if (!this.#scanNumber() || this.#input[this.#pos - 1] !== "i") return bad();
      return this.#emit("complex");
    }
    this.#emit("number");
  }
}

function count(s: string, c: string): number {
  let n = 0;
  for (let i = s.indexOf(c); i >= 0; i = s.indexOf(c, i + 1)) n++;
  return n;
}

function trimRight(s: string): string {
  let end = s.length;
  while (end > 0 && isSpace(s[end - 1])) end--;
  return s.slice(0, end);
}

function leftTrimLength(s: string): number {
  let i = 0;
  while (i < s.length && isSpace(s[i])) i++;
  return i;
}
