/**
 * Request fields whose names a CGI-style backend folds onto another name (`_` and `.`, which
 * CGI and PHP write as `_` like `-`) are dropped by the server before any route runs, on both
 * listener engines, as current Caddy does (modules/caddyhttp/server.go, GHSA-f59h-q822-g45g
 * and GHSA-49wc-4hcv-v58q) and nginx by default; a real `gatehouse run` process proxies to a
 * raw-socket upstream that records the fields it receives. `expected_underscore_headers` and
 * `expected_dot_headers` keep the names they list (exact or `prefix*`, case-insensitive) and
 * drop their hyphenated spellings instead; malformed entries are refused with their path.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { FramingUpstream } from "./_framing_upstream.ts";
import { validateConfig } from "../../lib/cli/validate.ts";
import { adaptGatehousefile } from "../../lib/server/adapters/gatehousefile/mod.ts";

const ENGINES = ["deno", "node"] as const;

function proxy(dial: string, engine: string, extra: Record<string, unknown> = {}) {
  return {
    listener_engine: engine,
    ...extra,
    routes: [{ handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }] }],
  };
}

/** The field names (lower case) the upstream received, without the proxy's own. */
function names(up: FramingUpstream): string[] {
  const own = new Set(["host", "via", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"]);
  return up.requests[0].fields.map(([k]) => k).filter((k) => !own.has(k)).sort();
}

for (const engine of ENGINES) {
  Deno.test(`header names with _ or . are dropped before the routes (${engine} engine)`, async () => {
    const up = new FramingUpstream();
    const g = await startGatehouse({ site: proxy(up.dial, engine) });
    try {
      const r = await fetch(`http://127.0.0.1:${g.ports.site}/`, {
        headers: {
          "X_Forwarded_For": "6.6.6.6",
          "Remote_User": "mallory",
          "Remote.User": "mallory",
          "a_b.c": "1",
          "X-Custom": "kept",
        },
      });
      assert.equal(await r.text(), "ok GET /");
      assert.deepEqual(names(up), [
        "accept",
        "accept-encoding",
        "accept-language",
        "user-agent",
        "x-custom",
      ]);
      assert.equal(
        up.requests[0].fields.find(([k]) => k === "x-forwarded-for")?.[1],
        "127.0.0.1",
      );
    } finally {
      await g.stop();
      await up.close();
    }
  });
}

Deno.test("expected_underscore_headers and expected_dot_headers keep the names they list", async () => {
  const up = new FramingUpstream();
  const g = await startGatehouse({
    site: proxy(up.dial, "node", {
      expected_underscore_headers: ["X_Keep", "webhook_*"],
      expected_dot_headers: ["x.dot", "both_sep.exact"],
    }),
  });
  try {
    const r = await fetch(`http://127.0.0.1:${g.ports.site}/`, {
      headers: {
        "x_keep": "1",
        "X-Keep": "hyphenated twin of a listed name",
        "Webhook_Id": "2",
        "Webhook-Id": "hyphenated twin of a listed prefix",
        "X.Dot": "3",
        "X-Dot": "hyphenated twin",
        "both_sep.exact": "4",
        "webhook_a.b": "a glob never vouches for the other separator",
        "other_thing": "not listed",
        "other.thing": "not listed",
        "Plain": "5",
      },
    });
    assert.equal(await r.text(), "ok GET /");
    const got = Object.fromEntries(
      up.requests[0].fields.filter(([k]) => !k.startsWith("accept") && k !== "user-agent"),
    );
    assert.deepEqual(got, {
      "host": `127.0.0.1:${g.ports.site}`,
      "x_keep": "1",
      "webhook_id": "2",
      "x.dot": "3",
      "both_sep.exact": "4",
      "plain": "5",
      "via": "1.1 Gatehouse",
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-host": `127.0.0.1:${g.ports.site}`,
      "x-forwarded-proto": "http",
    });
  } finally {
    await g.stop();
    await up.close();
  }
});

Deno.test("expected_*_headers: malformed entries are refused, naming the entry", async () => {
  const config = (srv: Record<string, unknown>) => ({
    admin: { disabled: true },
    apps: { http: { servers: { s: { listen: ["127.0.0.1:0"], ...srv } } } },
  });
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { expected_underscore_headers: ["a*_b"] },
      /expected_underscore_headers\[0\]: "a\*_b" has '\*'/,
    ],
    [
      { expected_underscore_headers: ["ok_a", "plain"] },
      /expected_underscore_headers\[1\]: "plain" does not contain a "_"/,
    ],
    [{ expected_dot_headers: ["a_b"] }, /expected_dot_headers\[0\]: "a_b" does not contain a "\."/],
    [
      { expected_dot_headers: ["a .b"] },
      /expected_dot_headers\[0\]: "a \.b" is not a header field name/,
    ],
    [{ expected_underscore_headers: ["é_x"] }, /is not a header field name/],
    [{ expected_underscore_headers: "a_b" }, /expected_underscore_headers/],
  ];
  for (const [srv, message] of cases) {
    await assert.rejects(validateConfig(config(srv)), message, JSON.stringify(srv));
  }
  // the Gatehousefile's `servers` option adapts to the same fields, and the result loads
  const { result: adapted } = adaptGatehousefile(
    "{\n\tservers {\n\t\texpected_underscore_headers X_Keep webhook_*\n\t\texpected_dot_headers x.dot\n\t}\n}\n\n:0 {\n\trespond ok\n}\n",
  );
  const srv = Object.values(
    (adapted as { apps: { http: { servers: Record<string, Record<string, unknown>> } } }).apps
      .http.servers,
  )[0];
  assert.deepEqual(srv.expected_underscore_headers, ["X_Keep", "webhook_*"]);
  assert.deepEqual(srv.expected_dot_headers, ["x.dot"]);
  await validateConfig({ ...(adapted as Record<string, unknown>), admin: { disabled: true } });
});
