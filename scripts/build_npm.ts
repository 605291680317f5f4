/**
 * Builds the npm mirror in `npm/`: every entry of `deno.json` `exports` whose file exists is
 * compiled with the TypeScript compiler to ES modules (`.js`) with declarations (`.d.ts`);
 * relative `.ts` specifiers become `.js`; bare specifiers resolve through `deno.json`
 * `imports` to npm package names; `package.json` `exports` mirror `deno.json`'s.
 *
 * The mirror has no `dependencies`: every npm package the code imports is an optional peer
 * dependency (with the version range from the import map), so installing the mirror installs
 * nothing else, and an app adds the packages of the parts it uses (README, "Install"). The core
 * imports none; `./d1` loads `@libsql/client` only in `openLibsql`; the server loads each of its
 * packages when a config uses the feature. Every dynamic `import()` of the mirror goes through
 * `_peers.js`, which turns Node's "Cannot find package 'x'" for a peer into an error naming the
 * package and the `npm install` line; a static import of a missing peer (`hono` of `./mail`,
 * `react`, `preact`) fails with Node's own error, which names the package.
 *
 * Unless `--no-install`, the peers are then installed in `npm/` without being saved
 * (`npm install --no-save`) so the Node tests (`node --test tests/npm/`) can import every part,
 * and the build fails when an installed package's `engines.node` excludes the oldest Node the
 * mirror's own `engines.node` allows (`scripts/npm_engines.ts`). The mail reference's renderer
 * bundle is carried as a file of the source tree, not a dependency (`carryReferenceRenderer`).
 *
 * Type errors do not stop the build (`deno check` is the type gate; TypeScript here lacks
 * Deno's built-in types): a run that succeeds prints a summary of a few lines (what was built,
 * how many diagnostics, what was installed); `--verbose` adds each TypeScript diagnostic and
 * npm's own output. A failure prints everything it has.
 *
 * ```sh
 * deno task build:npm
 * deno task build:npm --verbose   # with every TypeScript diagnostic and npm's output
 * # elsewhere, with another version, without installing the dependencies (to publish it):
 * deno run -A scripts/build_npm.ts --out /tmp/mirror --version 0.2.1 --no-install
 * ```
 *
 * @module
 */
import ts from "typescript";
import { checkEngines, formatConflicts } from "./npm_engines.ts";
import { BUNDLE_DIR } from "./reference_bundle.ts";

const root = new URL("../", import.meta.url);
const rootPath = decodeURIComponent(root.pathname).replace(/\/$/, "");

/** `--out <dir>`, `--version <v>` (the mirror's version instead of deno.json's), `--no-install`. */
function option(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = Deno.args[i + 1];
  if (!value || value.startsWith("--")) throw new Error(`--${name} needs a value`);
  return value;
}
const outArg = option("out");
const outDir = outArg
  ? (outArg.startsWith("/") ? outArg : `${Deno.cwd()}/${outArg}`).replace(/\/$/, "")
  : `${rootPath}/npm`;
const versionOverride = option("version");
const skipInstall = Deno.args.includes("--no-install");
const verbose = Deno.args.includes("--verbose");

/**
 * The Node versions the mirror supports: 20.19 is the oldest markdown-it 15's `entities` 8
 * (the templates' `markdown`) runs on; the OpenTelemetry JS 2.x packages (tracing, OTLP
 * metrics) need 20.6. Every installed dependency must allow it.
 */
const NODE_ENGINES = ">=20.19.0";

interface DenoJson {
  name: string;
  version: string;
  license?: string;
  description?: string;
  exports: string | Record<string, string>;
  imports?: Record<string, string>;
  compilerOptions?: { jsx?: string; jsxImportSource?: string };
}

/** An npm package named by an import-map value (`npm:name@range/path` or `npm:/name@range/`). */
interface NpmTarget {
  name: string;
  range: string;
  subpath: string;
}

function parseNpm(value: string): NpmTarget | null {
  const m = value.match(/^npm:\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]+))?(\/.*)?$/);
  if (!m) return null;
  return { name: m[1], range: m[2] ?? "*", subpath: m[3] ?? "" };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

const denoJson: DenoJson = JSON.parse(await Deno.readTextFile(`${rootPath}/deno.json`));
const exportsMap = typeof denoJson.exports === "string"
  ? { ".": denoJson.exports }
  : denoJson.exports;
const importMap = denoJson.imports ?? {};

const entries: { key: string; source: string }[] = [];
for (const [key, source] of Object.entries(exportsMap)) {
  if (await exists(`${rootPath}/${source}`)) entries.push({ key, source });
  else console.warn(`skipping export ${key}: ${source} does not exist yet`);
}
if (entries.length === 0) throw new Error("deno.json exports name no existing file");

/** Every npm package the code imports, with the range of the import map. */
const peers = new Map<string, string>();

/**
 * UI libraries an app brings itself, exactly one copy of each: their peer ranges are the majors
 * the pages support rather than the import map's. `@types/react` only names React's types for
 * Deno (`@ts-types`); TypeScript users have their own.
 */
const PEER_RANGES: Record<string, string> = {
  react: "^18.0.0 || ^19.0.0",
  preact: "^10.0.0 || ^11.0.0",
};
const TYPE_ONLY = new Set(["@types/react"]);

/** Maps a bare specifier through the import map to an npm specifier; records the dependency. */
function mapBare(specifier: string, from: string): string {
  let target: NpmTarget | null = null;
  let rest = "";
  if (specifier.startsWith("npm:")) {
    target = parseNpm(specifier);
  } else if (Object.hasOwn(importMap, specifier)) {
    target = parseNpm(importMap[specifier]);
  } else {
    const prefix = Object.keys(importMap)
      .filter((k) => k.endsWith("/") && specifier.startsWith(k))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix) {
      target = parseNpm(importMap[prefix]);
      rest = specifier.slice(prefix.length);
    }
  }
  if (!target) {
    throw new Error(
      `${from}: cannot map "${specifier}" to an npm package (add it to deno.json imports as npm:)`,
    );
  }
  if (TYPE_ONLY.has(target.name)) return target.name;
  const known = peers.get(target.name);
  if (known && known !== target.range) {
    throw new Error(`${target.name}: conflicting ranges ${known} and ${target.range}`);
  }
  peers.set(target.name, target.range);
  const sub = `${target.subpath}${rest}`.replace(/^\/+/, "");
  return sub ? `${target.name}/${sub}` : target.name;
}

function mapSpecifier(spec: string, file: string): string {
  if (spec.startsWith("./") || spec.startsWith("../")) {
    return spec.replace(/\.[mc]?tsx?$/, (ext) => ext.includes("m") ? ".mjs" : ".js");
  }
  if (spec.startsWith("node:") || /^[a-z]+:\/\//.test(spec)) return spec;
  if (spec.startsWith("jsr:")) {
    throw new Error(`${file}: jsr: specifiers cannot be mirrored to npm (${spec})`);
  }
  return mapBare(spec, file);
}

/** The module every dynamic import goes through (`peerModuleSource`), at the mirror's root. */
const PEER_MODULE = "_peers.js";
const PEER_IMPORT = "__gatehouseImportPeer";

/**
 * Rewrites module specifiers of imports, exports, dynamic imports and `import()` types; in code
 * (not declarations), wraps each dynamic import in `_peers.js`'s `importPeer`.
 */
const specifierTransformer = (code: boolean) =>
<T extends ts.Node>(
  context: ts.TransformationContext,
): (node: T) => T => {
  const f = context.factory;
  return (top: T) => {
    if (!ts.isSourceFile(top)) return top;
    const file = top.fileName.slice(rootPath.length + 1);
    let wrapped = false;
    const lit = (node: ts.Expression | undefined) =>
      node && ts.isStringLiteral(node) ? node.text : null;
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isImportDeclaration(node)) {
        const spec = lit(node.moduleSpecifier)!;
        return f.updateImportDeclaration(
          node,
          node.modifiers,
          node.importClause,
          f.createStringLiteral(mapSpecifier(spec, file)),
          node.attributes,
        );
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
        const spec = lit(node.moduleSpecifier);
        if (spec === null) return node;
        return f.updateExportDeclaration(
          node,
          node.modifiers,
          node.isTypeOnly,
          node.exportClause,
          f.createStringLiteral(mapSpecifier(spec, file)),
          node.attributes,
        );
      }
      if (
        ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        lit(node.arguments[0]) !== null
      ) {
        const spec = mapSpecifier(lit(node.arguments[0])!, file);
        const call = f.updateCallExpression(node, node.expression, node.typeArguments, [
          f.createStringLiteral(spec),
          ...node.arguments.slice(1),
        ]);
        if (!code) return call;
        wrapped = true;
        return f.createCallExpression(f.createIdentifier(PEER_IMPORT), undefined, [call]);
      }
      if (
        ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        const spec = mapSpecifier(node.argument.literal.text, file);
        return f.updateImportTypeNode(
          node,
          f.createLiteralTypeNode(f.createStringLiteral(spec)),
          node.attributes,
          node.qualifier,
          ts.visitNodes(node.typeArguments, visit, ts.isTypeNode),
          node.isTypeOf,
        );
      }
      return ts.visitEachChild(node, visit, context);
    };
    const out = ts.visitNode(top, visit) as ts.SourceFile;
    if (!wrapped) return out as unknown as T;
    const depth = file.split("/").length - 1;
    const from = depth === 0 ? `./${PEER_MODULE}` : `${"../".repeat(depth)}${PEER_MODULE}`;
    const helper = f.createImportDeclaration(
      undefined,
      f.createImportClause(
        false,
        undefined,
        f.createNamedImports([
          f.createImportSpecifier(
            false,
            f.createIdentifier("importPeer"),
            f.createIdentifier(PEER_IMPORT),
          ),
        ]),
      ),
      f.createStringLiteral(from),
    );
    return f.updateSourceFile(out, [helper, ...out.statements]) as unknown as T;
  };
};

/**
 * `_peers.js`: `importPeer(loading)` passes a dynamic import through, and turns its failure for
 * want of one of the mirror's peer packages (Node's and Deno's `Cannot find package 'x'`, Bun's
 * `Cannot find package "x"`) into an error that names the package and how to install it.
 */
function peerModuleSource(ranges: Record<string, string>): string {
  return `// Generated by scripts/build_npm.ts. The npm packages of @gatehouse/gatehouse are optional
// peer dependencies: an app installs those of the parts it uses. A feature loads its packages
// when it is first used, through importPeer, which names a missing one and how to install it.
const PEERS = ${JSON.stringify(ranges, null, 2)};

export function importPeer(loading) {
  return loading.catch((error) => {
    const message = String(error && error.message);
    const found = /(?:Cannot|Could not) find (?:package|module) ['"]((?:@[^/'"]+\\/)?[^/'"]+)/.exec(message);
    const name = found && found[1];
    if (!name || !Object.prototype.hasOwnProperty.call(PEERS, name)) throw error;
    throw new Error(
      \`@gatehouse/gatehouse: this feature needs the npm package \${name}, an optional peer \` +
        \`dependency that is not installed. Install it beside @gatehouse/gatehouse: \` +
        \`npm install \${name}@"\${PEERS[name]}"\`,
      { cause: error },
    );
  });
}
`;
}

/**
 * @types/node from Deno's npm directory of the root or of tests/ when present (some libraries
 * import `node:`).
 */
async function nodeTypes(): Promise<string[]> {
  for (const base of [rootPath, `${rootPath}/tests`]) {
    const dir = `${base}/node_modules/.deno`;
    try {
      for await (const e of Deno.readDir(dir)) {
        if (e.name.startsWith("@types+node@")) {
          const index = `${dir}/${e.name}/node_modules/@types/node/index.d.ts`;
          if (await exists(index)) return [index];
        }
      }
    } catch {
      // no node_modules there: type errors for node: imports are reported, not fatal
    }
  }
  return [];
}

const jsx = denoJson.compilerOptions?.jsx;
const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  declaration: true,
  outDir,
  rootDir: rootPath,
  strict: true,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  rewriteRelativeImportExtensions: true,
  allowJs: true,
  esModuleInterop: true,
  removeComments: false,
  newLine: ts.NewLineKind.LineFeed,
  types: [],
  ...(jsx
    ? {
      jsx: jsx === "react" ? ts.JsxEmit.React : ts.JsxEmit.ReactJSX,
      jsxImportSource: denoJson.compilerOptions?.jsxImportSource,
    }
    : {}),
};

// Map import-map specifiers to real paths for type resolution (node_modules from Deno).
const host = ts.createCompilerHost(options);
const rootNames = [...entries.map((e) => `${rootPath}/${e.source}`), ...await nodeTypes()];

await Deno.remove(outDir, { recursive: true }).catch(() => {});
await Deno.mkdir(outDir, { recursive: true });

const written: string[] = [];
const program = ts.createProgram({ rootNames, options, host });
const result = program.emit(
  undefined,
  (fileName, text) => {
    Deno.mkdirSync(fileName.slice(0, fileName.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(fileName, text);
    written.push(fileName.slice(outDir.length + 1));
  },
  undefined,
  false,
  { before: [specifierTransformer(true)], afterDeclarations: [specifierTransformer(false)] },
);
if (result.emitSkipped) {
  const why = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics]
    .filter((d) =>
      d.category === ts.DiagnosticCategory.Error &&
      !/Deno/.test(ts.flattenDiagnosticMessageText(d.messageText, " "))
    )
    .map((d) =>
      "  " + ts.formatDiagnostic(d, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => rootPath,
        getNewLine: () => "\n",
      }).trim()
    );
  throw new Error(`TypeScript emitted nothing:\n${why.join("\n")}`);
}

const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
if (diagnostics.length > 0 && verbose) {
  console.warn(`${diagnostics.length} TypeScript diagnostics (deno check is authoritative):`);
  for (const d of diagnostics) {
    console.warn(
      "  " + ts.formatDiagnostic(d, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => rootPath,
        getNewLine: () => "\n",
      }).trim(),
    );
  }
}

const peerNames = [...peers.keys()].sort();
/** The range a peer is declared with: the pages' majors for UI libraries, else the import map's. */
const peerRange = (name: string) => PEER_RANGES[name] ?? peers.get(name)!;
await Deno.writeTextFile(
  `${outDir}/${PEER_MODULE}`,
  peerModuleSource(Object.fromEntries(peerNames.map((n) => [n, peerRange(n)]))),
);
written.push(PEER_MODULE);

function outFile(source: string, ext: ".js" | ".d.ts"): string {
  return "./" + source.replace(/^\.\//, "").replace(/\.[mc]?tsx?$/, ext);
}

const pkg = {
  name: denoJson.name,
  version: versionOverride ?? denoJson.version,
  ...(denoJson.description ? { description: denoJson.description } : {}),
  license: denoJson.license ?? "UNLICENSED",
  type: "module",
  engines: { node: NODE_ENGINES },
  exports: Object.fromEntries(
    entries.map((e) => [e.key, {
      types: outFile(e.source, ".d.ts"),
      import: outFile(e.source, ".js"),
      default: outFile(e.source, ".js"),
    }]),
  ),
  ...(peers.size > 0
    ? {
      peerDependencies: Object.fromEntries(peerNames.map((n) => [n, peerRange(n)])),
      peerDependenciesMeta: Object.fromEntries(peerNames.map((n) => [n, { optional: true }])),
    }
    : {}),
};
await Deno.writeTextFile(`${outDir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
for (const doc of ["README.md", "LICENSE"]) {
  if (await exists(`${rootPath}/${doc}`)) {
    await Deno.copyFile(`${rootPath}/${doc}`, `${outDir}/${doc}`);
  }
}

/**
 * The mail API's interactive reference serves the gzip-compressed browser bundle of npm
 * `@scalar/api-reference` that the source tree carries beside `lib/mail/reference_page.ts`
 * (`lib/mail/scalar/`, written by `scripts/reference_bundle.ts`, with its licence): the mirror
 * carries the same files, instead of depending on the package (about 280 MB with Vue,
 * CodeMirror, ..., and Node >= 22, for a file the server only reads and sends to browsers).
 * Returns the bundle's version (from its licence), or null when the reference is not built.
 */
async function carryReferenceRenderer(): Promise<string | null> {
  if (!written.includes("lib/mail/reference_page.js")) return null;
  const from = `${rootPath}/${BUNDLE_DIR}`;
  const to = `${outDir}/${BUNDLE_DIR}`;
  await Deno.mkdir(to, { recursive: true });
  for (const file of ["standalone.js.gz", "LICENSE"]) {
    await Deno.copyFile(`${from}/${file}`, `${to}/${file}`);
  }
  const notice = await Deno.readTextFile(`${from}/LICENSE`);
  return notice.match(/@scalar\/api-reference\s+(\S+)/)?.[1] ?? "?";
}

const carried = await carryReferenceRenderer();

console.log(
  `${outArg ?? "npm/"}: ${entries.map((e) => e.key).join(", ")} -> ${written.length} files, ` +
    `${peers.size} optional peer dependencies` +
    (carried ? `; carries @scalar/api-reference ${carried}'s browser bundle` : ""),
);
if (diagnostics.length > 0) {
  // TypeScript here lacks Deno's types (`Deno`, `Deno.Conn`, ...): expected, not errors
  console.log(
    `  ${diagnostics.length} TypeScript diagnostics, not fatal (deno check is the type gate)` +
      (verbose ? "" : "; --verbose lists them"),
  );
}

// The emitted deno.json is what the mirror's code reads its version from (`gatehouse version`).
if (versionOverride && await exists(`${outDir}/deno.json`)) {
  const emitted = JSON.parse(await Deno.readTextFile(`${outDir}/deno.json`));
  emitted.version = versionOverride;
  await Deno.writeTextFile(`${outDir}/deno.json`, JSON.stringify(emitted, null, 4));
}

if (peers.size > 0 && !skipInstall) {
  // For the Node tests: every peer, at the import map's range, not saved in package.json.
  const install = await new Deno.Command("npm", {
    args: [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      ...(verbose ? [] : ["--loglevel=error"]),
      ...peerNames.map((n) => `${n}@${peers.get(n)}`),
    ],
    cwd: outDir,
    stdout: verbose ? "inherit" : "piped",
    stderr: verbose ? "inherit" : "piped",
  }).output();
  if (!install.success) {
    if (!verbose) {
      const text = new TextDecoder();
      console.error(text.decode(install.stdout) + text.decode(install.stderr));
    }
    throw new Error("npm install in npm/ failed");
  }
  const report = await checkEngines(outDir);
  if (report.conflicts.length > 0) throw new Error(formatConflicts(report));
  console.log(
    `  installed the ${peers.size} peers for the Node tests: ${report.packages} packages, ` +
      `all run on Node ${report.lowest}`,
  );
}
