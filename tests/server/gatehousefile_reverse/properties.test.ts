/**
 * Properties of the JSON → Gatehousefile direction: it never throws and always writes
 * formatted text whatever JSON it is given, every problem names a path inside that JSON,
 * every word reads back as itself, and configs the adapter produced round-trip.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { reverseConfig } from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { rawWord, word } from "../../../lib/server/caddyfile/writer/tokens.ts";
import { WordError } from "../../../lib/server/caddyfile/writer/placeholders.ts";
import { diffJson } from "../../../lib/server/adapters/gatehousefile/reverse/diff.ts";
import { formatGatehousefile } from "../../../lib/server/caddyfile/formatter.ts";
import { tokenize } from "../../../lib/server/caddyfile/lexer.ts";
import { type AdaptFn, caddyAdapt, hasCaddy, ourAdapt } from "./_adapters.ts";
import { caddyfileText, gatehousefileText } from "./_sites.ts";
import { ROOT } from "../fixtures/helpers.ts";

/** True when `path` names a place in `json` (a key that is present, even if undefined). */
function exists(json: unknown, path: string): boolean {
  if (path === "") return true;
  let cur: unknown = json;
  for (const raw of path.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return false;
    cur = (cur as Record<string, unknown>)[key];
  }
  return true;
}

/** JSON shaped a little like a config, with arbitrary values in every place (bounded depth). */
const depth = { maxDepth: 3, depthIdentifier: "config", depthSize: "small" } as const;
const configLike = fc.letrec((tie) => ({
  value: fc.oneof(
    depth,
    fc.jsonValue({ maxDepth: 1 }),
    fc.constantFrom("static_response", "subroute", "reverse_proxy", "headers", "vars"),
    tie("route"),
  ),
  routes: fc.oneof(depth, fc.constant(undefined), fc.array(tie("route"), { maxLength: 2 })),
  route: fc.record({
    match: fc.option(
      fc.array(
        fc.dictionary(
          fc.constantFrom("host", "path", "method", "header", "not", "expression", "query"),
          tie("value"),
          { maxKeys: 3 },
        ),
        { maxLength: 2 },
      ),
      { nil: undefined },
    ),
    handle: fc.array(
      fc.record({
        handler: fc.constantFrom("static_response", "subroute", "headers", "rewrite", "vars", "x"),
        body: tie("value"),
        routes: tie("routes"),
      }, { requiredKeys: ["handler"] }),
      { maxLength: 2 },
    ),
    group: fc.option(fc.constantFrom("group0", "group1"), { nil: undefined }),
    terminal: fc.option(fc.boolean(), { nil: undefined }),
  }, { requiredKeys: [] }),
  config: fc.record({
    apps: fc.record({
      http: fc.record({
        servers: fc.dictionary(
          fc.constantFrom("srv0", "srv1", "web"),
          fc.record({
            listen: fc.array(fc.constantFrom(":80", ":443", "127.0.0.1:8080", "bad", ":x"), {
              maxLength: 2,
            }),
            routes: tie("routes"),
            automatic_https: fc.option(tie("value"), { nil: undefined }),
          }, { requiredKeys: ["listen"] }),
          { maxKeys: 2 },
        ),
        http_port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
      }, { requiredKeys: [] }),
      tls: fc.option(tie("value"), { nil: undefined }),
    }, { requiredKeys: [] }),
    admin: fc.option(tie("value"), { nil: undefined }),
    logging: fc.option(tie("value"), { nil: undefined }),
  }, { requiredKeys: [] }),
}));

Deno.test("reverse never throws, writes formatted text and names real paths", () => {
  fc.assert(
    fc.property(fc.oneof(configLike.config, fc.jsonValue()), (config) => {
      const r = reverseConfig(config);
      assert.equal(formatGatehousefile(r.text), r.text === "" ? "\n" : r.text);
      for (const p of [...r.problems, ...r.warnings]) {
        assert.ok(exists(config, p.path), `problem path ${p.path} not in JSON`);
        assert.ok(p.message.length > 0);
      }
    }),
    { numRuns: 150, interruptAfterTimeLimit: 20_000 },
  );
});

/** The JSON outputs of Caddy's adapt corpus, read in place (undefined when it is absent). */
function corpusJson(): unknown[] | undefined {
  const dir = `${ROOT}../shared/caddyfile-corpus/corpus`;
  try {
    return [...Deno.readDirSync(dir)].filter((e) => e.isFile).map((e) => {
      const text = Deno.readTextFileSync(`${dir}/${e.name}`);
      const out = text.slice(text.indexOf("\n----------\n") + 12).trim();
      return out.startsWith("{") ? JSON.parse(out) : undefined;
    }).filter((j) => j !== undefined);
  } catch {
    return undefined;
  }
}

/** Every place in a JSON value, as key lists. */
function places(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  if (at.length) out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => places(x, [...at, i], out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) places(x, [...at, k], out);
  }
  return out;
}

const corpus = corpusJson();

Deno.test({
  name:
    "reverse of mutated corpus configs never throws, writes formatted text and names real paths",
  ignore: !corpus?.length,
  fn: () => {
    const edit = fc.record({
      pick: fc.nat(),
      value: fc.oneof(
        fc.constant(undefined), // delete
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom("*.php", "fastcgi", "GET", [2], {}, [], null, "", "x/y"),
      ),
    });
    fc.assert(
      fc.property(
        fc.nat(corpus!.length - 1),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        (i, edits) => {
          const config = structuredClone(corpus![i]);
          for (const { pick, value } of edits) {
            const all = places(config);
            if (!all.length) break;
            const at = all[pick % all.length];
            // deno-lint-ignore no-explicit-any
            let parent: any = config;
            for (const k of at.slice(0, -1)) parent = parent[k];
            const last = at[at.length - 1];
            if (value !== undefined) parent[last] = structuredClone(value);
            else if (Array.isArray(parent)) parent.splice(last as number, 1);
            else delete parent[last];
          }
          const r = reverseConfig(config);
          assert.equal(formatGatehousefile(r.text), r.text === "" ? "\n" : r.text);
          for (const p of [...r.problems, ...r.warnings]) {
            assert.ok(exists(config, p.path), `problem path ${p.path} not in JSON: ${p.message}`);
          }
        },
      ),
      { numRuns: 3000, interruptAfterTimeLimit: 30_000 },
    );
  },
});

Deno.test("every word reads back as exactly its text, or is refused with a reason", () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary", maxLength: 8 })), (s) => {
      for (const make of [rawWord, word]) {
        let t;
        try {
          t = make(s);
        } catch (e) {
          assert.ok(e instanceof WordError, String(e));
          continue;
        }
        const spelled = t.quote === '"'
          ? `"${t.text.replaceAll('"', '\\"')}"`
          : t.quote === "`"
          ? "`" + t.text + "`"
          : t.text;
        const back = tokenize(`d ${spelled}`, "x");
        assert.equal(back.length, 2);
        assert.equal(back[1].text, t.text);
      }
    }),
    { numRuns: 1000 },
  );
});

async function roundTrips(
  adapt: AdaptFn,
  runs: number,
  texts: fc.Arbitrary<string> = caddyfileText,
): Promise<void> {
  let adapted = 0, tried = 0;
  await fc.assert(
    fc.asyncProperty(texts, async (caddyfile) => {
      let json: unknown;
      tried++;
      try {
        json = await adapt(caddyfile);
      } catch {
        return; // the generator made something this adapter refuses (e.g. ambiguous sites)
      }
      adapted++;
      const r = reverseConfig(json);
      assert.deepEqual(r.problems, [], r.text);
      const back = await adapt(r.text);
      assert.deepEqual(diffJson(json, back), [], `${caddyfile}\n--- reversed:\n${r.text}`);
    }),
    { numRuns: runs, interruptAfterTimeLimit: 60_000 },
  );
  // the property is about adapted configs: most generated files must adapt
  assert.ok(adapted >= tried / 2, `only ${adapted} of ${tried} generated files adapted`);
}

Deno.test({
  name: "generated configs round-trip through caddy adapt (2.6.2)",
  ignore: !hasCaddy(),
  fn: () => roundTrips(caddyAdapt, 100),
});

Deno.test({
  name: "generated configs round-trip through our gatehousefile adapter",
  ignore: !ourAdapt(),
  fn: () => roundTrips(ourAdapt()!, 200),
});

Deno.test({
  name:
    "generated configs with php_fastcgi, forward_auth, site logs and bind protocols round-trip through our adapter",
  ignore: !ourAdapt(),
  fn: () => roundTrips(ourAdapt()!, 200, gatehousefileText),
});

Deno.test("reverse: a handler named like an Object method is an unknown handler, not a crash", () => {
  // found by the mutated-corpus property above: `valueOf` resolved to Object.prototype.valueOf
  for (const name of ["valueOf", "toString", "constructor", "__proto__", "hasOwnProperty"]) {
    const config = {
      apps: {
        http: {
          servers: {
            srv0: {
              listen: [":8080"],
              routes: [{ handle: [{ handler: name }] }],
            },
          },
        },
      },
    };
    const r = reverseConfig(config);
    assert.ok(
      r.problems.some((p) => p.message.includes(`handler module ${name} has no Gatehousefile`)),
      `${name}: ${JSON.stringify(r.problems)}`,
    );
  }
});
