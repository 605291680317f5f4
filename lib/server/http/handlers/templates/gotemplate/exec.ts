/**
 * The executor of Go's `text/template` (`text/template/exec.go`): walks a tree with the data
 * as dot, evaluates pipelines, fields, methods, map keys, variables and function calls with
 * Go's argument rules, and reports failures with Go's messages
 * (`template: <name>:<line>:<col>: executing "<name>" at <<node>>: ...`). Maps are read with
 * `missingkey=zero`, as Caddy sets it.
 *
 * @module
 */
import { TemplateError } from "./error.ts";
import { sprintValue } from "./fmt.ts";
import {
  type ArgNode,
  type BranchNode,
  type ChainNode,
  type CommandNode,
  type FieldNode,
  type IdentifierNode,
  type Node,
  nodeString,
  type NumberNode,
  type PipeNode,
  type TemplateNode,
  type VariableNode,
} from "./node.ts";
import {
  FuncError,
  GoFunc,
  GoObject,
  intValue,
  isMap,
  isTrue,
  mapEntries,
  mapZero,
  NilPtr,
  NO_FIELD,
  PARAM_TYPE_NAMES,
  type ParamType,
  typeArray,
  typeName,
} from "./value.ts";
import type { Tree } from "./parse.ts";

/** What the executor needs of the template set: its functions and its templates by name. */
export interface ExecEnv {
  /** A function by name (the set's, then the builtins) and whether it is a builtin. */
  findFunction(name: string): { fn: GoFunc; builtin: boolean } | undefined;
  /** A template's tree by name. */
  lookup(name: string): Tree | undefined;
  /** The template's name, for messages. */
  name: string;
}

/**
 * An evaluation step: a generator that yields the promises of asynchronous template functions
 * (file reads, sub-requests) to {@linkcode drive}, which resumes it with their results.
 */
export type Eval<T> = Generator<unknown, T, unknown>;

/**
 * Runs an evaluation to its end, awaiting each promise it yields (a rejected one is thrown
 * back into it, where the function call that made it reports it).
 */
export async function drive<T>(g: Eval<T>): Promise<T> {
  let r = g.next();
  while (!r.done) {
    try {
      r = g.next(await r.value);
    } catch (e) {
      r = g.throw(e);
    }
  }
  return r.value;
}

/** How deep `{{template}}` calls may nest (Go allows 100000; a JavaScript stack does not). */
export const MAX_EXEC_DEPTH = 1000;

/** How many nodes one execution may walk (a template that loops longer fails). */
export const MAX_EXEC_STEPS = 10_000_000;

/** How much one execution may write, in UTF-16 units (a template that writes more fails). */
export const MAX_EXEC_OUTPUT = 64 * 1024 * 1024;

/** No final argument (the value a pipeline's previous command hands on). */
const MISSING: unique symbol = Symbol("missing");
type Final = unknown | typeof MISSING;

class Break {}
class Continue {}
const BREAK = new Break();
const CONTINUE = new Continue();

/** The value of `$` and the other variables in scope. */
interface Variable {
  name: string;
  value: unknown;
}

/** Column of a node as Go counts it (bytes from the start of its line). */
function location(n: Node): string {
  const text = n.tree.text.slice(0, n.pos);
  const nl = text.lastIndexOf("\n");
  const col = nl < 0 ? n.pos : n.pos - (nl + 1);
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) line++;
  return `${n.tree.parseName}:${line}:${col}`;
}

/** Executes trees; one per `Execute`, a copy per `{{template}}` call. */
export class State {
  #env: ExecEnv;
  #out: string[];
  #vars: Variable[];
  #depth: number;
  #node: Node | null = null;
  #name: string;
  #budget: { steps: number; out: number };

  /**
   * A state for `dot`; `call` for a `{{template}}` call: its nesting depth, the called
   * template's name and the budget it shares with its caller.
   */
  constructor(
    env: ExecEnv,
    out: string[],
    dot: unknown,
    { depth = 0, name = env.name, budget = { steps: 0, out: 0 } }: {
      depth?: number;
      name?: string;
      budget?: { steps: number; out: number };
    } = {},
  ) {
    this.#budget = budget;
    this.#env = env;
    this.#out = out;
    this.#vars = [{ name: "$", value: dot }];
    this.#depth = depth;
    this.#name = name;
  }

  /** Runs a tree with `dot`. */
  *run(tree: Tree, dot: unknown): Eval<void> {
    if (!tree.root) this.errorf(`${JSON.stringify(tree.name)} is an incomplete or empty template`);
    yield* this.walk(dot, tree.root!);
  }

  errorf(msg: string, cause?: unknown): never {
    const name = this.#name;
    if (this.#node === null) throw new TemplateError(`template: ${name}: ${msg}`, "exec", cause);
    const context = nodeString(this.#node);
    throw new TemplateError(
      `template: ${location(this.#node)}: executing ${
        JSON.stringify(name)
      } at <${context}>: ${msg}`,
      "exec",
      cause,
    );
  }

  at(n: Node): void {
    this.#node = n;
  }

  // --- variables

  #mark(): number {
    return this.#vars.length;
  }
  #pop(mark: number): void {
    this.#vars.length = mark;
  }
  #setVar(name: string, value: unknown): void {
    for (let i = this.#vars.length - 1; i >= 0; i--) {
      if (this.#vars[i].name === name) {
        this.#vars[i].value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }
  #setTopVar(n: number, value: unknown): void {
    this.#vars[this.#vars.length - n].value = value;
  }
  #varValue(name: string): unknown {
    for (let i = this.#vars.length - 1; i >= 0; i--) {
      if (this.#vars[i].name === name) return this.#vars[i].value;
    }
    this.errorf(`undefined variable: ${name}`);
  }

  // --- walking

  *walk(dot: unknown, node: Node): Eval<void> {
    this.at(node);
    if (++this.#budget.steps > MAX_EXEC_STEPS) {
      this.errorf(`template ran too long (more than ${MAX_EXEC_STEPS} steps)`);
    }
    switch (node.type) {
      case "action": {
        const v = yield* this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, v);
        return;
      }
      case "break":
        throw BREAK;
      case "continue":
        throw CONTINUE;
      case "comment":
        return;
      case "if":
      case "with":
        return yield* this.walkIfOrWith(dot, node);
      case "list":
        for (const n of node.nodes) yield* this.walk(dot, n);
        return;
      case "range":
        return yield* this.walkRange(dot, node);
      case "template":
        return yield* this.walkTemplate(dot, node);
      case "text":
        this.#write(node.text);
        return;
    }
    this.errorf(`unknown node: ${nodeString(node)}`);
  }

  *walkIfOrWith(dot: unknown, n: BranchNode): Eval<void> {
    const mark = this.#mark();
    try {
      const val = yield* this.evalPipeline(dot, n.pipe);
      const truth = isTrue(val);
      if (truth === null) this.errorf(`if/with can't use ${sprintValue(val)}`);
      if (truth) yield* this.walk(n.type === "with" ? val : dot, n.list);
      else if (n.elseList) yield* this.walk(dot, n.elseList);
    } finally {
      this.#pop(mark);
    }
  }

  *walkRange(dot: unknown, r: BranchNode): Eval<void> {
    this.at(r);
    const outer = this.#mark();
    try {
      const val = yield* this.evalPipeline(dot, r.pipe);
      const mark = this.#mark();
      const items = this.#rangeItems(val, r);
      if (items !== null && items.length > 0) {
        for (const [k, v] of items) if (!(yield* this.#iteration(r, mark, k, v))) break;
        return;
      }
      if (r.elseList) yield* this.walk(dot, r.elseList);
    } finally {
      this.#pop(outer);
    }
  }

  /** One iteration of a range: sets its variables, walks the body; false after a break. */
  *#iteration(r: BranchNode, mark: number, index: unknown, elem: unknown): Eval<boolean> {
    const decl = r.pipe.decl;
    if (decl.length > 0) {
      if (r.pipe.isAssign) this.#setVar(decl[0].ident[0], decl.length > 1 ? index : elem);
      else this.#setTopVar(1, elem);
    }
    if (decl.length > 1) {
      if (r.pipe.isAssign) this.#setVar(decl[1].ident[0], elem);
      else this.#setTopVar(2, index);
    }
    try {
      yield* this.walk(elem, r.list);
    } catch (e) {
      if (e === BREAK) return false;
      if (e !== CONTINUE) throw e;
    } finally {
      this.#pop(mark);
    }
    return true;
  }

  /** The [index, element] pairs a range visits; null when there are none (nil). */
  #rangeItems(
    val: unknown,
    r: BranchNode,
  ): Iterable<[unknown, unknown]> & { length: number } | null {
    if (val === undefined || val === null || val instanceof NilPtr) return null;
    if (Array.isArray(val)) return val.map((v, i) => [BigInt(i), v]);
    if (val instanceof Uint8Array) return [...val].map((v, i) => [BigInt(i), BigInt(v)]);
    if (isMap(val)) return mapEntries(val);
    const n = intValue(val);
    if (n !== null) {
      // Go 1.22 ranges over integers (current Caddy's toolchain)
      if (r.pipe.decl.length > 1) this.errorf("can't use $x, $y := range over int");
      return {
        length: n > 0n ? 1 : 0,
        *[Symbol.iterator]() {
          for (let i = 0n; i < n; i++) yield [i, i] as [unknown, unknown];
        },
      };
    }
    this.errorf(`range can't iterate over ${sprintValue(val)}`);
  }

  *walkTemplate(dot: unknown, t: TemplateNode): Eval<void> {
    this.at(t);
    const tree = this.#env.lookup(t.name);
    if (!tree) this.errorf(`template ${JSON.stringify(t.name)} not defined`);
    if (this.#depth >= MAX_EXEC_DEPTH) {
      this.errorf(`exceeded maximum template depth (${MAX_EXEC_DEPTH})`);
    }
    const newDot = yield* this.evalPipeline(dot, t.pipe);
    const s = new State(this.#env, this.#out, newDot, {
      depth: this.#depth + 1,
      name: tree.name,
      budget: this.#budget,
    });
    yield* s.walk(newDot, tree.root ?? { type: "list", pos: 0, tree, nodes: [] });
  }

  // --- evaluation

  *evalPipeline(dot: unknown, pipe: PipeNode | null): Eval<unknown> {
    if (pipe === null) return undefined;
    this.at(pipe);
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = yield* this.evalCommand(dot, cmd, value);
      // an interface value: the thing inside (a nil interface is no value)
      if (value === null) value = undefined;
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.#setVar(v.ident[0], value);
      else this.#vars.push({ name: v.ident[0], value });
    }
    return value;
  }

  notAFunction(args: ArgNode[], final: Final): void {
    if (args.length > 1 || final !== MISSING) {
      this.errorf(`can't give argument to non-function ${nodeString(args[0])}`);
    }
  }

  *evalCommand(dot: unknown, cmd: CommandNode, final: Final): Eval<unknown> {
    const first = cmd.args[0];
    switch (first.type) {
      case "field":
        return yield* this.evalFieldNode(dot, first, cmd.args, final);
      case "chain":
        return yield* this.evalChainNode(dot, first, cmd.args, final);
      case "identifier":
        return yield* this.evalFunction(dot, first, cmd, cmd.args, final);
      case "pipe":
        this.notAFunction(cmd.args, final);
        return yield* this.evalPipeline(dot, first);
      case "variable":
        return yield* this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case "bool":
        return first.value;
      case "dot":
        return dot;
      case "nil":
        this.errorf("nil is not a command");
        break;
      case "number":
        return this.idealConstant(first);
      case "string":
        return first.text;
    }
    this.errorf(`can't evaluate command ${JSON.stringify(nodeString(first))}`);
  }

  idealConstant(n: NumberNode): unknown {
    this.at(n);
    const t = n.text;
    const hexInt = /^[+-]?0[xX]/.test(t) && !/[pP]/.test(t);
    if (n.isFloat && !hexInt && !t.startsWith("'") && /[.eEpP]/.test(t)) return n.float;
    if (n.isInt) return n.int;
    if (n.isUint) this.errorf(`${t} overflows int`);
    return undefined;
  }

  *evalFieldNode(dot: unknown, f: FieldNode, args: ArgNode[], final: Final): Eval<unknown> {
    this.at(f);
    return yield* this.evalFieldChain(dot, dot, f, f.ident, args, final);
  }

  *evalChainNode(dot: unknown, c: ChainNode, args: ArgNode[], final: Final): Eval<unknown> {
    this.at(c);
    if (c.node.type === "nil") this.errorf(`indirection through explicit nil in ${nodeString(c)}`);
    const pipe = yield* this.evalArg(dot, null, c.node);
    return yield* this.evalFieldChain(dot, pipe, c, c.field, args, final);
  }

  *evalVariableNode(dot: unknown, v: VariableNode, args: ArgNode[], final: Final): Eval<unknown> {
    this.at(v);
    const value = this.#varValue(v.ident[0]);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return yield* this.evalFieldChain(dot, value, v, v.ident.slice(1), args, final);
  }

  *evalFieldChain(
    dot: unknown,
    receiver: unknown,
    node: Node,
    ident: string[],
    args: ArgNode[],
    final: Final,
  ): Eval<unknown> {
    const n = ident.length;
    // the static type of a value read from a map of interfaces is `interface {}` (messages)
    let stat: string | null = null;
    for (let i = 0; i < n - 1; i++) {
      const from = receiver;
      receiver = yield* this.evalField(dot, ident[i], node, [], MISSING, receiver, stat);
      stat = from instanceof Map && typeName(from) === "map[string]interface {}"
        ? "interface {}"
        : null;
    }
    return yield* this.evalField(dot, ident[n - 1], node, args, final, receiver, stat);
  }

  *evalField(
    dot: unknown,
    name: string,
    node: Node,
    args: ArgNode[],
    final: Final,
    receiver: unknown,
    stat: string | null = null,
  ): Eval<unknown> {
    if (receiver === undefined) return undefined;
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${name}`);
    if (receiver instanceof GoObject) {
      const m = receiver.method(name);
      if (m) return yield* this.evalCall(dot, m, false, node, name, args, final);
    }
    const hasArgs = args.length > 1 || final !== MISSING;
    if (receiver instanceof Map || (receiver instanceof GoObject && receiver.kind === "map")) {
      if (hasArgs) this.errorf(`${name} is not a method but has arguments`);
      let v: unknown;
      if (receiver instanceof Map) v = receiver.has(name) ? receiver.get(name) : NO_FIELD;
      else v = receiver.field(name);
      return v === NO_FIELD ? mapZero(receiver) : v;
    }
    if (receiver instanceof GoObject && receiver.kind === "struct") {
      const v = receiver.field(name);
      if (v !== NO_FIELD) {
        if (hasArgs) this.errorf(`${name} has arguments but cannot be invoked as function`);
        return v;
      }
    }
    if (receiver instanceof NilPtr) {
      this.errorf(`nil pointer evaluating ${receiver.goType}.${name}`);
    }
    this.errorf(`can't evaluate field ${name} in type ${stat ?? typeName(receiver)}`);
  }

  *evalFunction(
    dot: unknown,
    node: IdentifierNode,
    cmd: Node,
    args: ArgNode[],
    final: Final,
  ): Eval<unknown> {
    this.at(node);
    const found = this.#env.findFunction(node.ident);
    if (!found) this.errorf(`${JSON.stringify(node.ident)} is not a defined function`);
    return yield* this.evalCall(dot, found.fn, found.builtin, cmd, node.ident, args, final);
  }

  *evalCall(
    dot: unknown,
    fn: GoFunc,
    builtin: boolean,
    node: Node,
    name: string,
    allArgs: ArgNode[],
    final: Final,
  ): Eval<unknown> {
    const args = allArgs.slice(1);
    let numIn = args.length;
    if (final !== MISSING) numIn++;
    let numFixed = args.length;
    if (fn.variadic !== null) {
      numFixed = fn.params.length;
      if (numIn < numFixed) {
        this.errorf(
          `wrong number of args for ${name}: want at least ${numFixed} got ${args.length}`,
        );
      }
    } else if (numIn !== fn.params.length) {
      this.errorf(`wrong number of args for ${name}: want ${fn.params.length} got ${numIn}`);
    }
    if (builtin && (name === "and" || name === "or")) {
      let v: unknown;
      for (const a of args) {
        v = yield* this.evalArg(dot, "value", a);
        if ((isTrue(v) ?? false) === (name === "or")) return v;
      }
      if (final !== MISSING) v = this.validateType(final, "value");
      return v;
    }
    const argv: unknown[] = [];
    let i = 0;
    for (; i < numFixed && i < args.length; i++) {
      argv.push(yield* this.evalArg(dot, fn.params[i], args[i]));
    }
    if (fn.variadic !== null) {
      for (; i < args.length; i++) argv.push(yield* this.evalArg(dot, fn.variadic, args[i]));
    }
    if (final !== MISSING) {
      let t: ParamType;
      if (fn.variadic !== null) t = numIn - 1 < numFixed ? fn.params[numIn - 1] : fn.variadic;
      else t = fn.params[fn.params.length - 1];
      argv.push(this.validateType(final, t));
    }
    try {
      const result = fn.impl(...argv);
      return result instanceof Promise ? yield result : result;
    } catch (e) {
      this.at(node);
      if (e instanceof FuncError || e instanceof TemplateError) {
        this.errorf(`error calling ${name}: ${e.message}`, e.cause);
      }
      if (e instanceof RangeError && /call stack/.test(e.message)) {
        this.errorf(`error calling ${name}: nested too deeply`);
      }
      this.errorf(`error calling ${name}: ${e instanceof Error ? e.message : String(e)}`, e);
    }
  }

  /** Checks a computed value against a parameter type (Go's `validateType`). */
  validateType(value: unknown, typ: ParamType | null): unknown {
    if (value === undefined) {
      if (typ === null || typ === "any") return undefined;
      if (typ === "[]any") return typeArray([], "[]interface {}");
      if (typ === "[]string") return typeArray([], "[]string");
      if (typ === "map") return new Map();
      this.errorf(`invalid value; expected ${PARAM_TYPE_NAMES[typ]}`);
    }
    if (typ === null || typ === "any" || typ === "value") return value;
    if (assignable(value, typ)) return value;
    this.errorf(
      `wrong type for value; expected ${PARAM_TYPE_NAMES[typ]}; got ${
        value === null ? "interface {}" : typeName(value)
      }`,
    );
  }

  *evalArg(dot: unknown, typ: ParamType | null, n: ArgNode): Eval<unknown> {
    this.at(n);
    switch (n.type) {
      case "dot":
        return this.validateType(dot, typ);
      case "nil":
        if (typ === null || typ === "any") return null;
        if (typ === "[]any" || typ === "[]string" || typ === "map") {
          return this.validateType(undefined, typ);
        }
        this.errorf(`cannot assign nil to ${PARAM_TYPE_NAMES[typ]}`);
        break;
      case "field":
        return this.validateType(yield* this.evalFieldNode(dot, n, [n], MISSING), typ);
      case "variable":
        return this.validateType(yield* this.evalVariableNode(dot, n, [], MISSING), typ);
      case "pipe":
        return this.validateType(yield* this.evalPipeline(dot, n), typ);
      case "identifier":
        return this.validateType(yield* this.evalFunction(dot, n, n, [], MISSING), typ);
      case "chain":
        return this.validateType(yield* this.evalChainNode(dot, n, [], MISSING), typ);
    }
    switch (typ) {
      case "bool":
        if (n.type === "bool") return n.value;
        this.errorf(`expected bool; found ${nodeString(n)}`);
        break;
      case "float64":
        if (n.type === "number" && n.isFloat) return n.float;
        this.errorf(`expected float; found ${nodeString(n)}`);
        break;
      case "int":
        if (n.type === "number" && n.isInt) return n.int;
        this.errorf(`expected integer; found ${nodeString(n)}`);
        break;
      case "string":
        if (n.type === "string") return n.text;
        this.errorf(`expected string; found ${nodeString(n)}`);
        break;
      case null:
      case "any":
      case "value":
        if (n.type === "bool") return n.value;
        if (n.type === "number") return this.idealConstant(n);
        if (n.type === "string") return n.text;
        break;
    }
    this.errorf(
      `can't handle ${nodeString(n)} for arg of type ${typ ? PARAM_TYPE_NAMES[typ] : "?"}`,
    );
  }

  printValue(n: Node, v: unknown): void {
    this.at(n);
    if (v === undefined) {
      this.#write("<no value>");
      return;
    }
    if (v instanceof GoFunc) this.errorf(`can't print ${nodeString(n)} of type ${typeName(v)}`);
    this.#write(sprintValue(v));
  }

  #write(s: string): void {
    this.#budget.out += s.length;
    if (this.#budget.out > MAX_EXEC_OUTPUT) {
      this.errorf(`template output larger than ${MAX_EXEC_OUTPUT} characters`);
    }
    this.#out.push(s);
  }
}

/** True when a value of its type may be passed as `typ`. */
function assignable(v: unknown, typ: ParamType): boolean {
  switch (typ) {
    case "string":
      return typeof v === "string";
    case "bool":
      return typeof v === "boolean";
    case "int":
      return typeof v === "bigint";
    case "float64":
      return typeof v === "number";
    case "[]any":
      return Array.isArray(v) && typeName(v) === "[]interface {}";
    case "[]string":
      return Array.isArray(v) && typeName(v) === "[]string";
    case "map":
      return v instanceof Map && typeName(v) === "map[string]interface {}";
    case "time":
      return v instanceof GoObject && v.goType === "time.Time";
    default:
      return true;
  }
}
