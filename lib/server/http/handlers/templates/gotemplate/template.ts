/**
 * A set of Go templates sharing functions and names (Go's `template.Template`): `parse` adds
 * the trees a text defines (a later definition replaces an earlier one, an empty one never
 * replaces), `execute` runs one with a value as dot and returns what it wrote.
 *
 * @module
 */
import { BUILTINS } from "./builtins.ts";
import { drive, type ExecEnv, State } from "./exec.ts";
import { isEmptyTree } from "./node.ts";
import { parse, type Tree } from "./parse.ts";
import type { GoFunc } from "./value.ts";

/** Options of a template set. */
export interface TemplateOptions {
  /** The action delimiters (`{{` and `}}` by default). */
  delims?: [string, string];
  /**
   * Functions beyond the builtins, by name, in maps a later one of which overrides an earlier
   * one (as Go's successive `Funcs` calls); they take precedence over the builtins.
   */
  funcs?: readonly ReadonlyMap<string, GoFunc>[];
}

/**
 * A named template and the set it belongs to.
 *
 * @example
 * ```ts
 * import { Template } from "./template.ts";
 * const t = new Template("page").parse("{{range .}}<{{.}}>{{end}}");
 * await t.execute(["a", "b"]); // "<a><b>"
 * ```
 */
export class Template {
  /** The template's name. */
  readonly name: string;
  #trees: Map<string, Tree>;
  #funcs: readonly ReadonlyMap<string, GoFunc>[];
  #delims: [string, string];

  constructor(name: string, options: TemplateOptions = {}) {
    this.name = name;
    this.#trees = new Map();
    this.#funcs = options.funcs ?? [];
    this.#delims = options.delims ?? ["{{", "}}"];
  }

  /** Parses `text` into the set (its body under this template's name). */
  parse(text: string): this {
    const trees = parse(this.name, text, {
      left: this.#delims[0],
      right: this.#delims[1],
      hasFunction: (n) => this.#func(n) !== undefined || BUILTINS.has(n),
    });
    for (const [name, tree] of trees) {
      const old = this.#trees.get(name);
      if (old && isEmptyTree(tree.root) && old.root) continue;
      this.#trees.set(name, tree);
    }
    return this;
  }

  #func(name: string): GoFunc | undefined {
    for (let i = this.#funcs.length - 1; i >= 0; i--) {
      const f = this.#funcs[i].get(name);
      if (f) return f;
    }
    return undefined;
  }

  /** The tree of a template of the set. */
  lookup(name: string): Tree | undefined {
    return this.#trees.get(name);
  }

  /**
   * Runs the template with `data` as dot: what it wrote, once every asynchronous function
   * it called has answered. Rejects with a TemplateError.
   */
  async execute(data: unknown): Promise<string> {
    const out: string[] = [];
    const env: ExecEnv = {
      name: this.name,
      lookup: (n) => this.#trees.get(n),
      findFunction: (n) => {
        const fn = this.#func(n);
        if (fn) return { fn, builtin: false };
        const b = BUILTINS.get(n);
        return b ? { fn: b, builtin: true } : undefined;
      },
    };
    const state = new State(env, out, data);
    const tree = this.#trees.get(this.name);
    if (!tree || !tree.root) {
      state.errorf(`${JSON.stringify(this.name)} is an incomplete or empty template`);
    }
    try {
      await drive(state.run(tree!, data));
    } catch (e) {
      if (e instanceof RangeError && /call stack/.test(e.message)) {
        state.errorf("template nested too deeply");
      }
      throw e;
    }
    return out.join("");
  }
}
