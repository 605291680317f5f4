/**
 * The web server's shape (docs/architecture.md), checked from the code's own imports: no
 * import runs back up a floor of the doc's table, the contracts at the bottom import nothing
 * above them, listeners never import http or tls, no module imports the Gatehousefile
 * assembler, nothing of the server imports the CLI, the import circles stay few and inside
 * one folder; there is one config error type, which every decoder throws, and one duration
 * parser; no function of the server takes more than five positional parameters; the version
 * and the inspector-signal guard live outside the CLI; the app imports the package's public
 * entry points only; and the CLI reads its flags typed, without casts.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;
const SERVER = "lib/server/";

/** Every .ts file under `dir` (relative to the repository root). */
async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(ROOT + dir)) {
    const path = `${dir}${e.name}`;
    if (e.isDirectory) out.push(...await files(`${path}/`));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

function normalize(path: string): string {
  const parts: string[] = [];
  for (const p of path.split("/")) {
    if (p === "..") parts.pop();
    else if (p !== "." && p !== "") parts.push(p);
  }
  return parts.join("/");
}

/** The source without comments (doc examples name imports that are not the file's own). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^"'`;]*?from\s*["'](\.[^"']+)["']|\bimport\(\s*["'](\.[^"']+)["']\s*\)|(?:^|\n)\s*import\s*["'](\.[^"']+)["']/g;

/** File → the repository files it imports. */
async function importGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const f of [...await files("lib/"), ...["admin.ts", "cli.ts", "mod.ts", "mail.ts"]]) {
    const text = code(await Deno.readTextFile(ROOT + f));
    const deps = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      deps.add(normalize(`${f.slice(0, f.lastIndexOf("/") + 1)}${spec}`));
    }
    graph.set(f, deps);
  }
  return graph;
}

const graph = await importGraph();

function importsOf(prefix: string): [string, string][] {
  const out: [string, string][] = [];
  for (const [f, deps] of graph) {
    if (f.startsWith(prefix)) { for (const d of deps) out.push([f, d]); }
  }
  return out;
}

Deno.test("architecture: the contracts (module/, config/, net/) import nothing above them", () => {
  const ground = ["module/", "config/", "net/"].map((d) => SERVER + d);
  const up = ground.flatMap((g) => importsOf(g)).filter(([, d]) =>
    !ground.some((g) => d.startsWith(g))
  );
  assert.deepEqual(up, []);
  // and net/ stands below config/
  assert.deepEqual(
    importsOf(SERVER + "net/").filter(([, d]) => !d.startsWith(SERVER + "net/")),
    [],
  );
});

Deno.test("architecture: listeners see neither http nor tls; the Caddyfile kit no module", () => {
  const listeners = importsOf(SERVER + "listeners/").filter(([, d]) =>
    d.startsWith(SERVER + "http/") || d.startsWith(SERVER + "tls/") ||
    d.startsWith(SERVER + "adapters/")
  );
  assert.deepEqual(listeners, []);
  const kit = importsOf(SERVER + "caddyfile/").filter(([, d]) =>
    d.startsWith(SERVER) && !d.startsWith(SERVER + "caddyfile/") &&
    !["module/", "config/", "net/"].some((g) => d.startsWith(SERVER + g)) &&
    d !== SERVER + "adapter.ts"
  );
  assert.deepEqual(kit, []);
});

Deno.test("architecture: no module imports the assembler, nothing of the server the CLI", () => {
  const above = new Set(
    ["standard.ts", "embed.ts", "engine.ts", "context.ts"].map((f) => SERVER + f),
  );
  const assembler = [...graph].flatMap(([f, deps]) =>
    f.startsWith(SERVER) && !f.startsWith(SERVER + "adapters/") && !above.has(f)
      ? [...deps].filter((d) => d.startsWith(SERVER + "adapters/")).map((d) => [f, d])
      : []
  );
  assert.deepEqual(assembler, []);
  assert.deepEqual(importsOf(SERVER).filter(([, d]) => d.startsWith("lib/cli/")), []);
});

/** Strongly connected components of the file graph with more than one file. */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

Deno.test("architecture: at most 8 import circles, each inside one folder", () => {
  const found = circles();
  assert.ok(found.length <= 8, `import circles:\n${found.map((c) => c.join(" ")).join("\n")}`);
  for (const c of found) {
    const dirs = new Set(c.map((f) => f.slice(0, f.lastIndexOf("/"))));
    assert.equal(dirs.size, 1, `a circle crosses folders: ${c.join(" ")}`);
  }
});

Deno.test("architecture: one config error type (ConfigError; the Gatehousefile's extends it)", async () => {
  const errors: string[] = [];
  for (const f of await files(SERVER)) {
    const text = code(await Deno.readTextFile(ROOT + f));
    for (const m of text.matchAll(/class (\w*Config\w*Error|\w*fileError)\s+extends\s+(\w+)/g)) {
      errors.push(`${f.slice(SERVER.length)}: ${m[1]} extends ${m[2]}`);
    }
  }
  assert.deepEqual(errors, [
    "caddyfile/dispenser.ts: GatehousefileError extends ConfigError",
    "config/error.ts: ConfigError extends Error",
  ]);
});

Deno.test("architecture: one duration parser (config/duration.ts), for JSON and the Gatehousefile", async () => {
  const parsers: string[] = [];
  for (const f of await files(SERVER)) {
    const text = code(await Deno.readTextFile(ROOT + f));
    // a table of duration units, or a function that parses a duration
    if (/["']?µs["']?\s*:/.test(text)) parsers.push(`${f.slice(SERVER.length)}: a unit table`);
    for (const m of text.matchAll(/function (\w*[pP]arse\w*Duration\w*)\s*\(/g)) {
      parsers.push(`${f.slice(SERVER.length)}: ${m[1]}`);
    }
  }
  assert.deepEqual(parsers, [
    "config/duration.ts: a unit table",
    "config/duration.ts: goParseDuration",
    "config/duration.ts: parseDuration",
  ]);
});

/**
 * The floor table of docs/architecture.md: a folder (ending in "/") or a file, as a repository
 * path, and its floor. Names in the table are relative to `lib/server/` unless they start with
 * `lib/`.
 */
async function floorTable(): Promise<Map<string, number>> {
  const doc = await Deno.readTextFile(ROOT + "docs/architecture.md");
  const floors = new Map<string, number>();
  for (const row of doc.matchAll(/^\|\s*(\d+)\s*\|([^|]*)\|/gm)) {
    for (const name of row[2].matchAll(/`([^`]+)`/g)) {
      floors.set(name[1].startsWith("lib/") ? name[1] : SERVER + name[1], Number(row[1]));
    }
  }
  return floors;
}

Deno.test("architecture: no import in lib/server runs back up a floor of docs/architecture.md", async () => {
  const floors = await floorTable();
  assert.ok(floors.size > 20, "the floor table is read from docs/architecture.md");
  const floorOf = (f: string) => {
    for (const [name, floor] of floors) {
      if (name.endsWith("/") ? f.startsWith(name) : f === name) return floor;
    }
    return undefined;
  };
  const unplaced = new Set<string>();
  const up: string[] = [];
  for (const [f, deps] of graph) {
    if (!f.startsWith(SERVER)) continue;
    const from = floorOf(f);
    if (from === undefined) unplaced.add(f);
    for (const d of deps) {
      const to = floorOf(d);
      if (to === undefined) unplaced.add(d);
      else if (from !== undefined && to > from) up.push(`${f} (${from}) → ${d} (${to})`);
    }
  }
  assert.deepEqual([...unplaced], [], "every file of the server and what it imports has a floor");
  assert.deepEqual(up, []);
});

/**
 * The decoding code of `text`: all of it in a file named config.ts or under config/, else each
 * top-level `function decode…` and each module definition (`const x: ModuleDefinition…`).
 * Returns `[first line, text]` pieces.
 */
function decodingCode(file: string, text: string): [number, string][] {
  if (/\/config\.ts$/.test(file) || file.startsWith(SERVER + "config/")) return [[1, text]];
  const starts = [
    ...text.matchAll(
      /^(?:export )?(?:default )?(?:async )?(?:function\*?|const|let|class|abstract class) (\w+)/gm,
    ),
  ];
  const out: [number, string][] = [];
  starts.forEach((m, i) => {
    const piece = text.slice(m.index, starts[i + 1]?.index ?? text.length);
    const decoder = /^(?:export )?(?:async )?function decode/.test(piece) ||
      /^(?:export )?const \w+\s*:\s*ModuleDefinition\b/.test(piece);
    if (decoder) out.push([text.slice(0, m.index).split("\n").length, piece]);
  });
  return out;
}

/** The source without comments, lines kept (so that line numbers stay). */
function codeLines(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, "")).replace(
    /^\s*\/\/.*$/gm,
    "",
  );
}

Deno.test("architecture: every config refusal of a decoder is a ConfigError, never a bare Error", async () => {
  const bare: string[] = [];
  for (const f of await files(SERVER)) {
    const text = codeLines(await Deno.readTextFile(ROOT + f));
    for (const [line, piece] of decodingCode(f, text)) {
      piece.split("\n").forEach((row, i) => {
        if (/\bnew Error\(/.test(row)) bare.push(`${f}:${line + i}: ${row.trim()}`);
      });
    }
  }
  assert.deepEqual(bare, []);
});

/**
 * The number of parameters of the list whose "(" is at `open` in `text` (commas at its own
 * depth, outside strings; destructured parameters count once).
 */
function parameterCount(text: string, open: number): number {
  let depth = 0, commas = 0, any = false, quote = "", i = open;
  for (; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = "";
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") {
      quote = ch;
      any = true;
    } else if ("([{<".includes(ch)) {
      if (ch === "<" && text[i - 1] === " " && text[i + 1] === " ") continue; // a comparison
      if (++depth > 1) any = true;
    } else if (")]}>".includes(ch)) {
      if (ch === ">" && text[i - 1] === "=") continue; // an arrow inside a type
      if (--depth === 0) break;
    } else if (depth === 1 && ch === ",") commas++;
    else if (depth === 1 && !/\s/.test(ch)) any = true;
  }
  if (!any) return 0;
  return text.slice(open + 1, i).trim().endsWith(",") ? commas : commas + 1;
}

/** Function declarations, methods and constructors (with a body), and arrow functions. */
const SIGNATURE =
  /\bfunction\s*\*?\s*(\w*)\s*(?:<[^(]*>)?\s*\(|^\s*(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*(?!(?:if|for|while|switch|catch|with|return|await|typeof|new)\b)(#?\w+)\s*(?:<[^(]*>)?\s*\((?=[^;]*\)\s*(?::[^{;]+)?\{)|(?:=|:|\(|,|return)\s*(?:async\s*)?(\()(?=[^;]*?\)\s*(?::\s*[^=;]+)?=>)/gm;

Deno.test("architecture: no function, method or constructor of the server takes more than five positional parameters", async () => {
  const long: string[] = [];
  for (const f of await files(SERVER)) {
    const text = codeLines(await Deno.readTextFile(ROOT + f));
    for (const m of text.matchAll(SIGNATURE)) {
      const n = parameterCount(text, m.index + m[0].length - 1);
      if (n > 5) {
        const line = text.slice(0, m.index + m[0].search(/\S/)).split("\n").length;
        long.push(`${f}:${line}: ${m[1] || m[2] || "(arrow)"} takes ${n}`);
      }
    }
  }
  assert.deepEqual(long, []);
});

Deno.test("architecture: VERSION and the inspector-signal guard are leaves outside the CLI", async () => {
  const defined: string[] = [];
  for (const f of await files("lib/")) {
    const text = code(await Deno.readTextFile(ROOT + f));
    if (/export const VERSION\b/.test(text)) defined.push(`${f}: VERSION`);
    for (const m of text.matchAll(/export (?:async )?function (\w*InspectorSignal)\b/g)) {
      defined.push(`${f}: ${m[1]}`);
    }
  }
  assert.deepEqual(defined, [
    "lib/inspector_signal.ts: ignoreInspectorSignal",
    "lib/inspector_signal.ts: guardInspectorSignal",
    "lib/version.ts: VERSION",
  ]);
  // leaves: they import nothing of the package
  for (const leaf of ["lib/version.ts", "lib/inspector_signal.ts"]) {
    assert.deepEqual([...graph.get(leaf)!].filter((d) => d.endsWith(".ts")), [], leaf);
  }
  // the server (metrics, tracing, FastCGI) reads the version from the leaf
  const users = importsOf(SERVER).filter(([, d]) => d === "lib/version.ts").map(([f]) => f);
  for (const f of ["metrics/otlp.ts", "tracing/provider.ts"]) {
    assert.ok(users.includes(SERVER + f), f);
  }
  assert.ok(users.some((f) => f.includes("/fastcgi/")), "FastCGI's SERVER_SOFTWARE");
});

Deno.test("architecture: the app imports the package's public entry points only", async () => {
  const PUBLIC = ["mod.ts", "d1.ts", "react.ts", "preact.ts", "mail.ts", "admin.ts"];
  const outside: string[] = [];
  for (const f of await files("app/")) {
    const text = code(await Deno.readTextFile(ROOT + f));
    for (const m of text.matchAll(IMPORT)) {
      const d = normalize(`${f.slice(0, f.lastIndexOf("/") + 1)}${m[1] ?? m[2] ?? m[3]}`);
      if (!d.startsWith("app/") && !PUBLIC.includes(d)) outside.push(`${f} → ${d}`);
    }
  }
  assert.deepEqual(outside, []);
});

Deno.test("architecture: the CLI reads its flags typed from their declarations, without casts", async () => {
  const casts: string[] = [];
  for (const f of await files("lib/cli/")) {
    const text = code(await Deno.readTextFile(ROOT + f));
    for (const m of text.matchAll(/\bflags(?:\.\w+|\[[^\]]+\])\s+as\s+[\w[\]|" ]+/g)) {
      casts.push(`${f}: ${m[0]}`);
    }
  }
  assert.deepEqual(casts, []);
});
