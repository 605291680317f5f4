/**
 * Fuzzing the parser, the adapter and the formatter: on random text, on generated configs
 * with random mutations, and on mutations of real-looking configs, they return or throw an
 * Error with a message — never a crash of another kind (TypeError, RangeError, stack
 * overflow) — and always finish (fast-check time limits; no hang).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { noFiles } from "../../../lib/server/adapters/gatehousefile/files.ts";
import { formatGatehousefile } from "../../../lib/server/adapters/gatehousefile/formatter.ts";
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

function tolerated(e: unknown): boolean {
  return e instanceof Error && (e.constructor === Error || e.name === "GatehousefileError") &&
    e.message.length > 0;
}

Deno.test("fuzz: adapt returns or throws a plain error with a message; fmt never throws", () => {
  fc.assert(
    fc.property(input, (src) => {
      try {
        adaptGatehousefile(src, {
          filename: "Gatehousefile",
          files: noFiles,
          env: () => undefined,
        });
      } catch (e) {
        assert.ok(tolerated(e), `unexpected ${(e as Error)?.name}: ${(e as Error)?.stack}`);
      }
      const out = formatGatehousefile(src);
      assert.ok(out.endsWith("\n"));
    }),
    { numRuns: 3000, interruptAfterTimeLimit: 60_000 },
  );
});
