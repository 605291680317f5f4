/**
 * Table tests of the JSON → Gatehousefile direction: what each part is written as, and the
 * JSON path and reason of each part that has no Gatehousefile form.
 */
import assert from "node:assert/strict";
import {
  gatehousefileFromJson,
  reverseConfig,
} from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { caddyAdapt, hasCaddy } from "./_adapters.ts";

/** A config with one catch-all site on :8080 running `routes`. */
function site(routes: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apps: { http: { servers: { srv0: { listen: [":8080"], routes, ...extra } } } } };
}
const respond = (body: string) => ({ handler: "static_response", body });
const setHeader = (k: string, v: string) => ({
  handler: "headers",
  response: { set: { [k]: [v] } },
});

async function roundTrips(config: unknown): Promise<void> {
  if (!hasCaddy()) return;
  const r = reverseConfig(config);
  assert.deepEqual(await caddyAdapt(r.text), config, r.text);
}

Deno.test("handlers out of directive order get an order option, and round-trip", async () => {
  const config = site([{ handle: [respond("hi"), setHeader("X-A", "1")] }]);
  const r = reverseConfig(config);
  assert.deepEqual(r.problems, []);
  assert.match(r.text, /^\{\n\torder (respond before header|header before \w+)\n\}\n/);
  assert.match(r.text, /:8080 \{\n\trespond hi\n\theader X-A 1\n\}\n$/);
  await roundTrips(config);
});

Deno.test("orders no single option can keep are written in a route block, with a warning", () => {
  const config = {
    apps: {
      http: {
        servers: {
          a: { listen: [":8080"], routes: [{ handle: [respond("a"), setHeader("X-A", "1")] }] },
          b: { listen: [":8081"], routes: [{ handle: [setHeader("X-B", "1"), respond("b")] }] },
        },
      },
    },
  };
  const r = reverseConfig(config);
  assert.deepEqual(r.problems, []);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0].message, /written inside a route block/);
  // one of the two lists keeps its order through the order option, the other in a route
  assert.equal(r.text.match(/\troute \{/g)?.length, 1);
  assert.match(r.text, /respond a/);
  assert.match(r.text, /respond b/);
});

Deno.test("placeholders are written short where they expand back; literal shorthands are refused", () => {
  const ok = reverseConfig(
    site([{ handle: [respond("{http.request.host}{http.request.uri.path}")] }]),
  );
  assert.match(ok.text, /respond \{host\}\{path\}/);
  const bad = reverseConfig(site([{ handle: [respond("literal {host}")] }]));
  assert.equal(bad.problems.length, 1);
  assert.equal(bad.problems[0].path, "/apps/http/servers/srv0/routes/0/handle/0");
  assert.match(bad.problems[0].message, /contains \{host\}, which a Gatehousefile always expands/);
  const env = reverseConfig(site([{ handle: [respond("{$HOME}")] }]));
  assert.match(env.problems[0].message, /\{\$\.\.\.\}, which a Gatehousefile always replaces/);
});

Deno.test("each part with no form is named by its JSON path, and the rest is written", () => {
  const r = reverseConfig(site([
    { handle: [{ handler: "static_response", body: "x", unknown_field: 1 }] },
    { match: [{ method: ["GET"] }, { method: ["HEAD"] }], handle: [respond("y")] },
    { handle: [respond("z")], terminal: true },
    { handle: [{ handler: "not_a_module" }] },
    { handle: [respond("kept")] },
  ], { some_option: true }));
  assert.deepEqual(r.problems.map((p) => p.path), [
    "/apps/http/servers/srv0/routes/0/handle/0/unknown_field",
    "/apps/http/servers/srv0/routes/1/match",
    "/apps/http/servers/srv0/routes/2/terminal",
    "/apps/http/servers/srv0/routes/3/handle/0",
    "/apps/http/servers/srv0/some_option",
  ]);
  assert.match(r.text, /respond kept/);
});

Deno.test("named matchers take the name their expression carries; inline paths stay inline", () => {
  const config = site([
    { match: [{ path: ["/api/*"] }], handle: [respond("api")] },
    {
      match: [{ expression: { expr: "path('/x*')", name: "xs" }, method: ["GET"] }],
      handle: [respond("x")],
    },
  ]);
  const r = reverseConfig(config);
  assert.deepEqual(r.problems, []);
  assert.match(r.text, /@xs \{\n\t\texpression path\('\/x\*'\)\n\t\tmethod GET\n\t\}/);
  assert.match(r.text, /respond @xs x/);
  assert.match(r.text, /respond \/api\/\* api/);
});

Deno.test("with an adapter, every difference after adapting again is a problem", async () => {
  const config = site([{ handle: [respond("hi")] }]);
  const same = await gatehousefileFromJson(config, { adapt: () => structuredClone(config) });
  assert.equal(same.verified, true);
  assert.deepEqual(same.problems, []);
  const other = await gatehousefileFromJson(config, {
    adapt: () => site([{ handle: [respond("other")] }]),
  });
  assert.equal(other.verified, false);
  assert.deepEqual(other.problems.map((p) => p.path), [
    "/apps/http/servers/srv0/routes/0/handle/0/body",
  ]);
  assert.match(other.problems[0].message, /adapts to "other" here instead of "hi"/);
  const broken = await gatehousefileFromJson(config, {
    adapt: () => {
      throw new Error("boom");
    },
  });
  assert.match(broken.problems[0].message, /does not adapt: boom/);
});

Deno.test("an empty or null config is an empty Gatehousefile", () => {
  assert.equal(reverseConfig(null).text, "");
  assert.equal(reverseConfig({}).text, "");
  assert.deepEqual(reverseConfig({}).problems, []);
  assert.deepEqual(reverseConfig([1]).problems, [{
    path: "",
    message: "a config must be an object, got array",
  }]);
});
