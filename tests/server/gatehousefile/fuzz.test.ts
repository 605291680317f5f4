/**
 * Fuzzing the parser, the adapter and the formatter: on random text, on generated configs
 * with random mutations, and on mutations of real-looking configs, they return or throw an
 * Error with a message — never a crash of another kind (TypeError, RangeError, stack
 * overflow) — and always finish: each input runs in a worker under its own deadline
 * (`_bounded.ts`), so a hang fails at once with the input that caused it.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { BoundedRunner, type Thrown } from "./_bounded.ts";
import { gatehousefile } from "./_gen.ts";

const SEEDS = [
  "{\n\tdebug\n\tservers :443 {\n\t\tprotocols h1 h2\n\t}\n}\n",
  "(snip) {\n\theader X {args[0]}\n\t{block}\n}\nexample.com {\n\timport snip a {\n\t\tlog\n\t}\n}\n",
  "&(r) {\n\trespond named\n}\n:80 {\n\tinvoke r\n}\n",
  "a.com {\n\t@m {\n\t\tpath /x*\n\t\tnot header X y\n\t}\n\treverse_proxy @m https://u:8443 {\n\t\ttransport http {\n\t\t\ttls_insecure_skip_verify\n\t\t}\n\t\t@e status 5xx\n\t\thandle_response @e {\n\t\t\trespond err\n\t\t}\n\t}\n}\n",
  "b.com {\n\ttls {\n\t\tclient_auth {\n\t\t\tmode require\n\t\t}\n\t}\n\trespond <<EOF\n\thi\n\tEOF 200\n}\n",
  ":8080 {\n\tphp_fastcgi 127.0.0.1:9000\n\tforward_auth auth:9091 {\n\t\turi /verify\n\t\tcopy_headers A B>C\n\t}\n}\n",
];

const mutate = (s: string, at: number, del: number, ins: string) => {
  const i = at % (s.length + 1);
  return s.slice(0, i) + ins + s.slice(i + del % 8);
};
const token = fc.constantFrom(
  "{",
  "}",
  "\n",
  "\\",
  '"',
  "`",
  "<<EOF\n",
  "#",
  "@m",
  "{$X}",
  "import",
  "*",
  "::",
  "{args[:]}",
  "{block}",
  "\t",
);
const input = fc.oneof(
  fc.string({ maxLength: 400 }),
  fc.tuple(gatehousefile, fc.nat(), fc.nat(), fc.oneof(fc.string({ maxLength: 5 }), token)).map((
    [s, a, d, i],
  ) => mutate(s, a, d, i)),
  fc.tuple(
    fc.constantFrom(...SEEDS),
    fc.array(fc.tuple(fc.nat(), fc.nat(), token), { maxLength: 4 }),
  )
    .map(([s, muts]) => muts.reduce((acc, [a, d, i]) => mutate(acc, a, d, i), s)),
);

function tolerated(e: Thrown): boolean {
  return (e.plain || e.name === "GatehousefileError") && e.message.length > 0;
}

Deno.test("fuzz: adapt returns or throws a plain error naming file:line; fmt never throws; each input is bounded", async () => {
  const runner = new BoundedRunner();
  try {
    await fc.assert(
      fc.asyncProperty(input, async (src) => {
        const r = await runner.run(src, ["adapt", "fmt"]);
        if (r.adapt && !r.adapt.ok) {
          const e = r.adapt.error;
          assert.ok(tolerated(e), `unexpected ${e.name}: ${e.stack}`);
          // every error names where (the input has one file)
          assert.match(e.message, /Gatehousefile:\d+/, `no location: ${JSON.stringify(src)}`);
        }
        assert.ok(r.fmt?.ok, r.fmt && !r.fmt.ok ? r.fmt.error.stack : "no fmt result");
        assert.ok(r.fmt.out.endsWith("\n"));
      }),
      // (a failing input is reported as found: shrinking a hang would take a deadline per try)
      { numRuns: 3000, interruptAfterTimeLimit: 120_000, endOnFailure: true },
    );
  } finally {
    runner.close();
  }
});

Deno.test("fuzz harness: an input that never finishes fails at its deadline, naming the input", async () => {
  const runner = new BoundedRunner(1_000);
  try {
    // (the control: the same runner answers an ordinary input)
    const ok = await runner.run(":80 {\n\trespond hi\n}\n", ["adapt", "fmt"]);
    assert.deepEqual(ok.adapt, { ok: true });
    await assert.rejects(
      () => runner.run("the input that hangs", ["spin"]),
      /no result within 1000 ms \(a hang\) for the input "the input that hangs"/,
    );
    // a fresh worker takes the next input
    const after = await runner.run("a.test {\n}\n", ["adapt"]);
    assert.deepEqual(after.adapt, { ok: true });
  } finally {
    runner.close();
  }
});
