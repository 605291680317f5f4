import assert from "node:assert/strict";
import {
  parseGatehousefile,
  type ParseWarning,
  type ServerBlock,
} from "../../../lib/server/caddyfile/parser.ts";
import { GatehousefileError } from "../../../lib/server/caddyfile/dispenser.ts";
import { type FileSource, localFiles, noFiles } from "../../../lib/server/caddyfile/files.ts";

const none = (_name: string): string | undefined => undefined;
const parse = (s: string, env = none) =>
  parseGatehousefile("Gatehousefile", s, { env, files: noFiles });
const shape = (blocks: ServerBlock[]) =>
  blocks.map((b) => ({
    keys: b.keys.map((k) => k.text),
    segs: b.segments.map((s) => s.map((t) => t.text).join(" ")),
  }));

function assertError(
  input: string,
  re: RegExp,
  files: FileSource = noFiles,
  filename = "Gatehousefile",
): GatehousefileError {
  let caught: unknown;
  try {
    parseGatehousefile(filename, input, { env: none, files });
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof GatehousefileError, `expected an error for ${JSON.stringify(input)}`);
  assert.match(caught.message, re);
  return caught;
}

Deno.test("parser: sites, several keys, segments with blocks", () => {
  assert.deepEqual(
    shape(
      parse(
        "a.com, b.com:8080,\n  c.com {\n\troot /srv\n\treverse_proxy x {\n\t\tlb_policy first\n\t}\n}\n",
      ),
    ),
    [{
      keys: ["a.com", "b.com:8080", "c.com"],
      segs: ["root /srv", "reverse_proxy x { lb_policy first }"],
    }],
  );
  // without a trailing comma, a new line ends the addresses: the rest is one braceless site
  assert.deepEqual(shape(parse("a.com\nb.com {\n\tx\n}")), [
    { keys: ["a.com"], segs: ["b.com { x }"] },
  ]);
  // a single site without braces
  assert.deepEqual(shape(parse("localhost\nrespond hi\nfile_server")), [
    { keys: ["localhost"], segs: ["respond hi", "file_server"] },
  ]);
  // global options block: no keys
  assert.deepEqual(shape(parse("{\n\tdebug\n}\n:80 {\n}\n")), [
    { keys: [], segs: ["debug"] },
    { keys: [":80"], segs: [] },
  ]);
  // a line of addresses alone
  assert.deepEqual(shape(parse("a.com b.com")), [{ keys: ["a.com", "b.com"], segs: [] }]);
  // '{}' inside a line and quoted braces are arguments
  assert.deepEqual(shape(parse(':80 {\n\tdir {} x\n\tdir2 "{"\n}')), [
    { keys: [":80"], segs: ["dir {} x", "dir2 {"] },
  ]);
});

Deno.test("parser: snippets, named routes and import of snippets with args and blocks", () => {
  const input = [
    "(common) {",
    "\theader X-A {args[0]}",
    "\trespond {args[:]}",
    "\t{block}",
    "}",
    "(blocks) {",
    "\tbefore",
    "\t{blocks.extra}",
    "\tafter",
    "}",
    "&(route1) {",
    "\trespond named",
    "}",
    "a.com {",
    "\timport common one two {",
    "\t\tlog",
    "\t}",
    "\timport blocks {",
    "\t\textra {",
    "\t\t\tencode gzip",
    "\t\t}",
    "\t}",
    "}",
  ].join("\n");
  const blocks = parse(input);
  assert.deepEqual(shape(blocks), [
    { keys: ["route1"], segs: ["route1 { respond named }"] },
    {
      keys: ["a.com"],
      segs: [
        "header X-A one",
        "respond one two",
        "log",
        "before",
        "encode gzip",
        "after",
      ],
    },
  ]);
  assert.equal(blocks[0].isNamedRoute, true);
  const header = blocks[1].segments[0][0];
  assert.deepEqual(header.imports, ["Gatehousefile:17 (import common)"]);
  assert.equal(header.line, 2);
});

Deno.test("parser: {args[:]} with placeholders around colons is not variadic; escapes resolve", () => {
  const blocks = parse("(s) {\n\trespond {args[0]}:{args[1]} \\{x\\}\n}\n:80 {\n\timport s a b\n}");
  assert.deepEqual(shape(blocks), [{ keys: [":80"], segs: ["respond a:b {x}"] }]);
});

Deno.test("parser: import of files, globs (dot files skipped) and cycles, relative to the importing file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/conf.d`);
    await Deno.writeTextFile(`${dir}/conf.d/a.conf`, "respond a {args[0]}\n");
    await Deno.writeTextFile(`${dir}/conf.d/b.conf`, "import ../leaf.txt\n");
    await Deno.writeTextFile(`${dir}/conf.d/.hidden`, "respond hidden\n");
    await Deno.writeTextFile(`${dir}/leaf.txt`, "respond leaf\n");
    await Deno.writeTextFile(`${dir}/empty.txt`, "  \n");
    await Deno.writeTextFile(`${dir}/loop1`, "import loop2\n");
    await Deno.writeTextFile(`${dir}/loop2`, "import loop1\n");
    const warnings: ParseWarning[] = [];
    const main = `${dir}/Gatehousefile`;
    const blocks = parseGatehousefile(
      main,
      ":80 {\n\timport conf.d/* X\n\timport empty.txt\n\timport nothing/*.conf\n}\n",
      { env: none, warn: (w) => warnings.push(w) },
    );
    assert.deepEqual(shape(blocks), [{ keys: [":80"], segs: ["respond a X", "respond leaf"] }]);
    assert.equal(blocks[0].segments[1][0].file, `${dir}/leaf.txt`);
    assert.deepEqual(blocks[0].segments[1][0].imports, [
      `${dir}/conf.d/b.conf:1 (import)`,
    ]);
    assert.deepEqual(warnings.map((w) => w.message), [
      `Import file is empty: ${dir}/empty.txt`,
      "No files matching import glob pattern: nothing/*.conf",
    ]);
    assert.throws(
      () => parseGatehousefile(main, ":80 {\n\timport loop1\n}\n", { env: none }),
      /a cycle of imports exists between/,
    );
    assert.throws(
      () => parseGatehousefile(main, ":80 {\n\timport missing.conf\n}\n", { env: none }),
      /File to import not found: missing.conf, at .*Gatehousefile:2$/,
    );
    assert.throws(
      () => parseGatehousefile(main, "import conf.d\n", { env: none }),
      /Could not import .*conf.d: is a directory/,
    );
    await Deno.writeTextFile(`${dir}/broken.conf`, "respond <<EOF\nnever closed\n");
    assert.throws(
      () => parseGatehousefile(main, ":80 {\n\timport broken.conf\n}\n", { env: none }),
      /Could not read tokens while importing .*broken.conf: .*broken.conf:3: incomplete heredoc <<EOF/,
    );
    assert.throws(
      () => parseGatehousefile(main, ":80 {\n\timport conf.d/[a*\n}\n", { env: none }),
      /Failed to use import pattern conf.d\/\[a\*: syntax error in pattern, at .*Gatehousefile:2$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parser: env variables are replaced before parsing", () => {
  const env = (n: string) => n === "SITE" ? "example.com" : undefined;
  assert.deepEqual(shape(parse("{$SITE} {\n\troot {$ROOT:/srv}\n}", env)), [
    { keys: ["example.com"], segs: ["root /srv"] },
  ]);
});

Deno.test("parser: every syntax error path names file and line", () => {
  const cases: [string, RegExp][] = [
    [
      "@m {\n\tpath /x\n}",
      /^request matchers may not be defined globally.*found @m, at Gatehousefile:1$/,
    ],
    [
      "a.com, {\n}",
      /^Expected another address but had '\{' - check for extra comma, at Gatehousefile:1$/,
    ],
    ["a.com{\n}", /^Site addresses cannot end with a curly brace: 'a.com\{'/],
    ["a.com,b.com {\n}", /^Site addresses cannot contain a comma ',': 'a.com,b.com'/],
    ["a.com,", /^unexpected EOF, at Gatehousefile:1$/],
    [
      ":80 {\n\tdir { x\n\t}\n}",
      /^Unexpected next token after '\{' on same line, at Gatehousefile:2$/,
    ],
    [":80 {\n\tdir\n\t{\n\t}\n}", /^Unexpected '\{' on a new line; did you mean/],
    [":80 {\n\tdir {}\n}", /^Unexpected '\{\}' at end of line, at Gatehousefile:2$/],
    [":80 {\n\tdir {\n\t\tx {\n\t}", /^unexpected EOF, at Gatehousefile:4$/],
    [
      ":80 {\n\tdir }\n}",
      /^Unexpected '\}' because no matching opening brace, at Gatehousefile:2$/,
    ],
    ["(s) {\n}\n(s) {\n}", /^redeclaration of previously declared snippet s, at Gatehousefile:3$/],
    ["(s)\nx", /^syntax error: unexpected token 'x', expecting '\{', at Gatehousefile:2/],
    ["(s) {\n\tdir", /^syntax error: unexpected token 'dir', expecting '\}'/],
    ["(s) {\n}\n(s2)\nimport s", /^global options block must appear before import directives/],
    [":80 {\n\timport\n}", /^wrong argument count or unexpected line ending after 'import'/],
    [':80 {\n\timport ""\n}', /^Import requires a non-empty filepath, at Gatehousefile:2$/],
    [":80 {\n\timport s {\n\t\t{\n\t\t}\n\t}\n}", /^anonymous blocks are not supported/],
    [":80 {\n\timport a*b*\n}", /^Glob pattern may only contain one wildcard/],
    [":80 {\n\timport x[ab]\n}", /^Glob pattern may only contain one wildcard/],
    [":80 {\n\timport file.txt\n}", /^File to import not found: file.txt/],
    [
      "(a) {\n\timport b\n}\n(b) {\n\timport a\n}\nimport a",
      /^a cycle of imports exists between Gatehousefile:b and Gatehousefile:a, at Gatehousefile:5 import chain/,
    ],
    ["x <<EOF\nabc", /^Gatehousefile:2: incomplete heredoc <<EOF on line #2/],
    ["\n\nx <<END!\nEND!", /^Gatehousefile:3: heredoc marker on line #3 must contain only/],
    [
      ":80 {\n\trespond hi",
      /^syntax error: unexpected token 'hi', expecting '\}', at Gatehousefile:2/,
    ],
    [":80 {", /^syntax error: unexpected token '\{', expecting '\}', at Gatehousefile:1/],
    [
      ":80 {\n" + "handle {\n".repeat(101) + "}\n".repeat(102),
      /^blocks are nested too deeply \(more than 100 levels\), at Gatehousefile:102$/,
    ],
    [
      Array.from({ length: 102 }, (_, i) => `(s${i}) {\n\timport s${i + 1}\n}\n`).join("") +
      ":80 {\n\timport s0\n}\n",
      /^imports are nested too deeply \(more than 100 levels\)/,
    ],
  ];
  for (const [input, re] of cases) assertError(input, re);
  const e = assertError(":80 {\n\tdir }\n}", /./);
  assert.deepEqual([e.file, e.line], ["Gatehousefile", 2]);
});

Deno.test("parser: a lexer error names the file and line, also in an imported file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad.conf`, "respond ok\nrespond <<EOF\nnever closed\n");
    const e = assertError(
      ":80 {\n\timport bad.conf\n}\n",
      /^Could not read tokens while importing .*bad\.conf: .*bad\.conf:\d: incomplete heredoc <<EOF/,
      localFiles,
      `${dir}/Gatehousefile`,
    );
    assert.deepEqual([e.file, e.line], [`${dir}/Gatehousefile`, 2]);
    const lex = assertError("a\n\nb <<\nx\n", /^Gatehousefile:3: missing opening heredoc marker/);
    assert.deepEqual([lex.file, lex.line], ["Gatehousefile", 3]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A file system with one file, `/site/part.conf`, whose reads and looks can be made to fail. */
function oneFile(opts: { vanishAfterLooks?: number; readError?: string }): FileSource {
  let looks = 0;
  return {
    cwd: () => "/site",
    stat(path) {
      if (path === "/site") return "dir";
      if (path !== "/site/part.conf") return undefined;
      looks++;
      return opts.vanishAfterLooks !== undefined && looks > opts.vanishAfterLooks
        ? undefined
        : "file";
    },
    readDir: (path) => path === "/site" ? ["part.conf"] : undefined,
    readTextFile(path) {
      if (opts.readError) throw new Error(opts.readError);
      if (path !== "/site/part.conf") throw new Error("not found");
      return "respond part\n";
    },
  };
}

Deno.test("parser: an import whose file vanishes or cannot be read fails at the import line", () => {
  const src = ":80 {\n\trespond first\n\timport part.conf\n}\n";
  // the control: the same file system, nothing failing, imports the file
  const ok = parseGatehousefile("/site/Gatehousefile", src, { env: none, files: oneFile({}) });
  assert.deepEqual(shape(ok), [{ keys: [":80"], segs: ["respond first", "respond part"] }]);
  // found by the pattern, gone when opened
  const gone = assertError(
    src,
    /^Could not import \/site\/part\.conf: no such file or directory, at \/site\/Gatehousefile:3$/,
    oneFile({ vanishAfterLooks: 1 }),
    "/site/Gatehousefile",
  );
  assert.equal(gone.line, 3);
  const unreadable = assertError(
    src,
    /^Could not read imported file \/site\/part\.conf: permission denied, at \/site\/Gatehousefile:3$/,
    oneFile({ readError: "permission denied" }),
    "/site/Gatehousefile",
  );
  assert.equal(unreadable.line, 3);
});

Deno.test("parser: every import argument warning names where the placeholder is written", () => {
  const warnings: ParseWarning[] = [];
  const snippet = [
    "(s) {",
    "	respond {args[5]}", // 2: out of bounds
    "	header X {args.0}", // 3: deprecated
    "	header Y {args[x]}", // 4: invalid index
    "	header Z a{args[0:1]}b", // 5: variadic inside a token
    "	respond {args[]}", // 6: empty index
    "	respond {args[x:]}", // 7: invalid start
    "	respond {args[:y]}", // 8: invalid end
    "	respond {args[0:9]}", // 9: variadic out of bounds
    "	header W {args.9}", // 10: out of bounds (old form)
    "	header V {args.q}", // 11: invalid index (old form)
    "}",
    ":80 {",
    "	import s one",
    "}",
  ].join("\n");
  const blocks = parseGatehousefile("Gatehousefile", snippet, {
    env: none,
    files: noFiles,
    warn: (w) => warnings.push(w),
  });
  assert.equal(blocks.length, 1);
  const got = warnings.map((w) => [w.line, w.message]);
  assert.deepEqual(got, [
    [2, "Placeholder {args[5]} index is out of bounds, only 1 argument(s) exist"],
    [3, "Placeholder {args.0} deprecated, use {args[0]} instead"],
    [4, "Placeholder {args[x]} has an invalid index"],
    [5, "Variadic placeholder {args[0:1]} must be a token on its own"],
    [6, "Placeholder {args[]} cannot have an empty index"],
    // (a variadic placeholder that cannot be expanded is then read as a plain one, as Caddy)
    [7, "Variadic placeholder {args[x:]} has an invalid start index"],
    [7, "Variadic placeholder {args[x:]} must be a token on its own"],
    [8, "Variadic placeholder {args[:y]} has an invalid end index"],
    [8, "Variadic placeholder {args[:y]} must be a token on its own"],
    [9, "Variadic placeholder {args[0:9]} indices are out of bounds, only 1 argument(s) exist"],
    [9, "Variadic placeholder {args[0:9]} must be a token on its own"],
    [10, "Placeholder {args.9} index is out of bounds, only 1 argument(s) exist"],
    [11, "Placeholder {args.q} has an invalid index"],
  ]);
  assert.ok(warnings.every((w) => w.file === "Gatehousefile"));
  // the import still happens: good placeholders are filled, bad ones left as written
  assert.deepEqual(blocks[0].segments[1].map((t) => t.text), ["header", "X", "one"]);
});

Deno.test("parser: a snippet defined in an imported file keeps its own args and block; imports inside nested blocks", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/snippets.conf`,
      "(greet) {\n\trespond {args[0]}\n\theader Z {args[0]\n\t{block}\n}\n",
    );
    const blocks = parseGatehousefile(
      `${dir}/Gatehousefile`,
      [
        "import snippets.conf not-for-the-snippet",
        "(lb) {",
        "\tlb_policy first",
        "}",
        ":80 {",
        "\treverse_proxy x {",
        "\t\timport lb",
        "\t}",
        "\timport greet hello {",
        "\t\theader X y",
        "\t}",
        "}",
      ].join("\n"),
      { env: none },
    );
    assert.deepEqual(shape(blocks), [{
      keys: [":80"],
      segs: [
        "reverse_proxy x { lb_policy first }",
        "respond hello",
        "header Z {args[0]", // (an unclosed placeholder stays as written)
        "header X y",
      ],
    }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
