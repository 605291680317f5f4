/**
 * Random input to the template engine (lexer, parser, executor): whatever the text, parsing
 * and running it either gives output or fails with a TemplateError whose message is Go's
 * (`template: <name>:...`), never another exception, a hang or a crash. Inputs are made of
 * the pieces templates are made of (delimiters, trim markers, keywords, operators, literals,
 * variables, functions) and of arbitrary text.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Template,
  TemplateError,
} from "../../../../lib/server/http/handlers/templates/gotemplate/mod.ts";
import { SPRIG } from "../../../../lib/server/http/handlers/templates/sprig.ts";

const PIECES = [
  "{{",
  "}}",
  "{{- ",
  " -}}",
  "{{/*",
  "*/}}",
  " ",
  "\n",
  "\t",
  ".",
  ".A",
  ".a.b",
  "$",
  "$x",
  "$y",
  ":=",
  "=",
  "|",
  "(",
  ")",
  ",",
  '"',
  '"s"',
  "`r`",
  "'c'",
  "'\\n'",
  "\\",
  "if ",
  "else ",
  "else if ",
  "end",
  "range ",
  "with ",
  "define ",
  "template ",
  "block ",
  "break",
  "continue",
  "nil",
  "true",
  "0",
  "1",
  "-1",
  "1.5",
  "1e3",
  "0x1F",
  "0b1",
  "1_0",
  "1i",
  "99999999999999999999",
  "print ",
  "printf ",
  '"%d %s %v %q %x %5.2f" ',
  "len ",
  "index ",
  "slice ",
  "and ",
  "or ",
  "not ",
  "eq ",
  "lt ",
  "html ",
  "js ",
  "urlquery ",
  "call ",
  "list ",
  "dict ",
  "upper ",
  "default ",
  "toJson ",
  "add ",
  "until ",
  "repeat ",
  "é",
  "\u{1F600}",
  "\0",
  "x",
  "A",
];

/** A template made of random pieces. */
const pieces = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((a) => a.join(""));

/** An action made of random pieces, so most inputs get past the lexer. */
const actions = fc.array(
  fc.tuple(
    fc.string({ maxLength: 4 }),
    fc.array(fc.constantFrom(...PIECES.slice(5)), { maxLength: 8 }),
  ),
  { maxLength: 8 },
).map((a) => a.map(([text, inner]) => `${text}{{${inner.join("")}}}`).join(""));

const DATA = new Map<string, unknown>([
  ["A", "a"],
  ["a", new Map([["b", [1n, "two", 3.5]]])],
]);

async function run(src: string): Promise<void> {
  try {
    await new Template("fuzz", { funcs: [SPRIG] }).parse(src).execute(DATA);
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    assert.match(e.message, /^template: fuzz[:\s]/);
  }
}

Deno.test("templates fuzz: random pieces parse and run or fail with a template error", async () => {
  await fc.assert(fc.asyncProperty(pieces, run), { numRuns: 3000, seed: 27 });
});

Deno.test("templates fuzz: random actions parse and run or fail with a template error", async () => {
  await fc.assert(fc.asyncProperty(actions, run), { numRuns: 3000, seed: 1327 });
});

Deno.test("templates fuzz: arbitrary text and custom delimiters", async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 80, unit: "binary" }), async (s) => {
      await run(s);
      try {
        await new Template("fuzz", { delims: ["[[", "]]"] }).parse(s.replaceAll("{{", "[["))
          .execute(1n);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
      }
    }),
    { numRuns: 2000, seed: 7 },
  );
});

Deno.test("templates fuzz: deep nesting and long loops fail cleanly", async () => {
  const deep = "{{" + "(".repeat(5000) + "1" + ")".repeat(5000) + "}}";
  const nested = "{{if 1}}".repeat(3000) + "{{end}}".repeat(3000);
  for (
    const src of [
      deep,
      nested,
      "{{range 100000000000}}{{end}}",
      '{{range until 1000000}}{{repeat 100 "x"}}{{end}}',
    ]
  ) {
    await assert.rejects(
      async () => await new Template("fuzz", { funcs: [SPRIG] }).parse(src).execute(null),
      (e: unknown) => e instanceof TemplateError && /^template: fuzz/.test(e.message),
    );
  }
});
