/**
 * `splitFrontMatter` (Caddy's `frontmatter.go`): metadata at the top of a document, YAML
 * between `---` lines (closed by `---` or `...`), TOML between `+++` lines, or JSON between
 * `{` and `}` lines, and the body after it. The YAML (`yaml`) and TOML (`smol-toml`) parsers
 * load on first use. Integers read as Go's `int`, other numbers as `float64` (JSON's numbers
 * are all `float64`, as Go's `encoding/json` reads them), tables as `map[string]interface {}`.
 *
 * @module
 */
import { FuncError, GoObject, GoTime, NO_FIELD, typeArray } from "./values.ts";
import { sprintValue } from "./gotemplate/fmt.ts";

/** Turns parsed data into the engine's Go values. */
export function toGo(v: unknown, depth = 0): unknown {
  if (depth > 1000) throw new FuncError("front matter nested too deeply");
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint" || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return v;
  if (v instanceof Date) return new GoTime(v);
  if (Array.isArray(v)) return typeArray(v.map((e) => toGo(e, depth + 1)), "[]interface {}");
  if (typeof v === "object") {
    const m = new Map<string, unknown>();
    for (const [k, e] of Object.entries(v as Record<string, unknown>)) m.set(k, toGo(e, depth + 1));
    return m;
  }
  return String(v);
}

/** Caddy's `parsedMarkdownDoc`: `.Meta` and `.Body`. */
export class ParsedDoc extends GoObject {
  readonly goType = "templates.parsedMarkdownDoc";
  constructor(readonly meta: Map<string, unknown> | null, readonly body: string) {
    super();
  }
  override field(name: string): unknown {
    if (name === "Meta") return this.meta ?? typeArrayMap();
    if (name === "Body") return this.body;
    return NO_FIELD;
  }
  override format(): string {
    return `{${this.meta ? sprintValue(this.meta) : "map[]"} ${this.body}}`;
  }
}

function typeArrayMap(): Map<string, unknown> {
  return new Map();
}

type Parser = (text: string) => Promise<Map<string, unknown>>;

async function yamlMeta(text: string): Promise<Map<string, unknown>> {
  const { parse } = await import("yaml");
  let v: unknown;
  try {
    v = parse(text, { intAsBigInt: true, maxAliasCount: 100 });
  } catch (e) {
    throw new FuncError(`yaml: ${(e as Error).message}`);
  }
  if (v === null || v === undefined) return new Map();
  if (typeof v !== "object" || Array.isArray(v)) {
    throw new FuncError(
      `yaml: cannot unmarshal ${typeof v} into Go value of type map[string]interface {}`,
    );
  }
  return toGo(v) as Map<string, unknown>;
}

async function tomlMeta(text: string): Promise<Map<string, unknown>> {
  const { parse } = await import("smol-toml");
  try {
    return toGo(parse(text, { integersAsBigInt: true })) as Map<string, unknown>;
  } catch (e) {
    throw new FuncError(`toml: ${(e as Error).message}`);
  }
}

function jsonMeta(text: string): Promise<Map<string, unknown>> {
  let v: unknown;
  try {
    v = JSON.parse("{" + text + "}");
  } catch (e) {
    throw new FuncError((e as Error).message);
  }
  return Promise.resolve(toGo(v) as Map<string, unknown>);
}

const TYPES: [string, string[], Parser][] = [
  ["---", ["---", "..."], yamlMeta],
  ["+++", ["+++"], tomlMeta],
  ["{", ["}"], jsonMeta],
];

/** Splits front matter from a document. */
export async function splitFrontMatter(input: string): Promise<ParsedDoc> {
  // the bounds of the first line that is not empty (Caddy's loop, kept as it is)
  let start = 0;
  let end = 0;
  let empty = true;
  for (let i = 0; i < input.length; i++) {
    const b = input[i];
    if (b === "\n") {
      start = end;
      if (start > 0) start++;
      end = i;
      if (!empty) break;
      continue;
    }
    empty = empty && /\s/.test(b);
  }
  const first = input.slice(start, end).trim();
  const type = TYPES.find(([open]) => open === first);
  if (!type) return new ParsedDoc(null, input);
  let fenceAt = -1;
  let fence = "";
  for (const f of type[1]) {
    const i = input.indexOf("\n" + f, end);
    if (i >= 0) {
      fenceAt = i;
      fence = f;
      break;
    }
  }
  if (fenceAt < 0) throw new FuncError("unterminated front matter");
  fenceAt += 1;
  const meta = await type[2](input.slice(end, fenceAt));
  return new ParsedDoc(meta, input.slice(fenceAt + fence.length));
}
