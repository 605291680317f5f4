import assert from "node:assert/strict";
import fc from "fast-check";
import {
  firstUnformattedLine,
  formatGatehousefile,
} from "../../../lib/server/caddyfile/formatter.ts";
import { tokenize } from "../../../lib/server/caddyfile/lexer.ts";
import { BoundedRunner } from "./_bounded.ts";
import { gatehousefile } from "./_gen.ts";

const fmt = formatGatehousefile;

Deno.test("fmt: indentation, spacing, braces, blank lines", () => {
  assert.equal(
    fmt(
      "  a.com   b.com{\nroot   * /srv\n\n\n\nreverse_proxy   x {\nlb_policy first\n     }\n}\nc.com {\n}",
    ),
    "a.com b.com {\n\troot * /srv\n\n\treverse_proxy x {\n\t\tlb_policy first\n\t}\n}\nc.com {\n}\n",
  );
  assert.equal(fmt("a\n{\nb\n}"), "a {\n\tb\n}\n");
  // a block that follows a closing brace on the same line gets a blank line before it
  assert.equal(fmt("a {\n} b {\n}"), "a {\n}\n\nb {\n}\n");
  assert.equal(fmt("{\ndebug\n}\n:80 {\n}"), "{\n\tdebug\n}\n:80 {\n}\n");
  assert.equal(fmt(""), "\n");
});

Deno.test("fmt: comments, quotes, backticks, placeholders and escapes are kept as written", () => {
  assert.equal(
    fmt('a {\n# top {\nrespond "x  {  y" # trailing  comment\nheader `{"a":  1}`\n}'),
    'a {\n\t# top {\n\trespond "x  {  y" # trailing  comment\n\theader `{"a":  1}`\n}\n',
  );
  assert.equal(
    fmt("a {\n\trespond {host} {$ENV} \\{x\\}\n}"),
    "a {\n\trespond {host} {$ENV} \\{x\\}\n}\n",
  );
  // a continued line is left as written
  assert.equal(fmt("a {\n\tdir one \\\n two\n}"), "a {\n\tdir one \\\n two\n}\n");
});

Deno.test("fmt: heredocs are copied byte for byte", () => {
  const src = "a {\n\trespond <<HTML\n  <p>  x  </p>\n\n    {not a block}\n  HTML 200\n}\n";
  assert.equal(fmt(src), src);
  // "\<<" is not a heredoc
  assert.equal(fmt("a {\n\trespond \\<<EOF\n}"), "a {\n\trespond \\<<EOF\n}\n");
});

Deno.test("fmt: an import line before a block on its own line keeps the brace apart", () => {
  assert.equal(fmt("import common\n{\n\tdebug\n}\n"), "import common\n{\n\tdebug\n}\n");
});

Deno.test("fmt: firstUnformattedLine points at the first difference (CRLF is not a difference)", () => {
  assert.equal(firstUnformattedLine("a {\n\tb\n}\n"), undefined);
  assert.equal(firstUnformattedLine("a {\r\n\tb\r\n}\r\n"), undefined);
  assert.equal(firstUnformattedLine("a {\n\tb\n\tc  d\n}\n"), 3);
});

Deno.test("fmt property: idempotent, keeps every token, never throws (generated configs)", () => {
  fc.assert(
    fc.property(gatehousefile, (src) => {
      const once = fmt(src);
      assert.equal(fmt(once), once);
      assert.deepEqual(
        tokenize(once, "F").map((t) => t.text),
        tokenize(src, "F").map((t) => t.text),
      );
      assert.equal(firstUnformattedLine(once), undefined);
    }),
    { numRuns: 400 },
  );
});

Deno.test("fmt fuzz: arbitrary and mutated text never throws and always ends with one newline", async () => {
  const mutated = fc.tuple(gatehousefile, fc.nat(), fc.string({ maxLength: 4 })).map((
    [s, at, ins],
  ) => s.slice(0, at % (s.length + 1)) + ins + s.slice(at % (s.length + 1)));
  // each input in a worker under its own deadline: a hang fails with the input that caused it
  const runner = new BoundedRunner();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: "grapheme", maxLength: 200 }),
          mutated,
        ),
        async (s) => {
          const r = await runner.run(s, ["fmt"]);
          assert.ok(r.fmt?.ok, r.fmt && !r.fmt.ok ? r.fmt.error.stack : "no fmt result");
          const out = r.fmt.out;
          assert.ok(out.endsWith("\n"));
          assert.ok(!out.endsWith("\n\n") || out === "\n");
        },
      ),
      { numRuns: 1500, endOnFailure: true },
    );
  } finally {
    runner.close();
  }
});
