/**
 * On-demand TLS against Pebble: a name the permission endpoint allows gets a certificate at its
 * first handshake; a denied name gets none and no order is placed; both ways of naming the
 * endpoint (`ask`, Caddy 2.6, and the `http` `permission` module, Caddy 2.7+); config errors
 * are clear.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, rootFile } from "./_server.ts";
import { startServer } from "../../../lib/server/embed.ts";

for (const how of ["ask", "permission"] as const) {
  Deno.test(`on-demand TLS: ${how === "ask" ? "ask" : "the http permission module"} allows one name and denies another`, () =>
    allowAndDeny(how));
}

async function allowAndDeny(how: "ask" | "permission") {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const asked: string[] = [];
  const ask = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const domain = new URL(req.url).searchParams.get("domain") ?? "";
    asked.push(domain);
    return new Response(null, { status: domain === "yes.test" ? 200 : 403 });
  });
  const log = `${dir}/server.log`;
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: {
        http_port: pebble.httpPort,
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            tls_connection_policies: [{}],
            routes: [{ handle: [{ handler: "static_response", body: "on demand" }] }],
          },
        },
      },
      tls: {
        automation: {
          on_demand: how === "ask"
            ? { ask: `http://127.0.0.1:${ask.addr.port}/ask` }
            : { permission: { module: "http", endpoint: `http://127.0.0.1:${ask.addr.port}/ask` } },
          policies: [{
            on_demand: true,
            issuers: [pebbleIssuer(pebble, { "tls-alpn": { disabled: true } })],
          }],
        },
      },
    },
  });
  try {
    assert.equal(pebble.orderCount(), 0, "nothing is obtained before a handshake asks");
    const root = await rootFile(pebble, dir);
    const res = await curl(`https://yes.test:${https}/`, {
      ca: root,
      resolve: `yes.test:${https}:127.0.0.1`,
      extra: ["--max-time", "30"],
    });
    assert.equal(res.status, 200, res.stderr);
    assert.equal(res.body, "on demand");
    assert.deepEqual(asked, ["yes.test"]);
    assert.equal(pebble.orderCount(), 1);
    // Later handshakes use the certificate: no new question, no new order.
    assert.deepEqual((await servedCert(https, "yes.test"))?.names, ["yes.test"]);
    assert.deepEqual(asked, ["yes.test"]);

    // Denied: the handshake fails, and no order is placed.
    const denied = await curl(`https://no.test:${https}/`, {
      ca: root,
      resolve: `no.test:${https}:127.0.0.1`,
    });
    assert.notEqual(denied.code, 0);
    assert.equal(denied.status, 0);
    assert.deepEqual(asked, ["yes.test", "no.test"]);
    assert.equal(pebble.orderCount(), 1);
    assert.ok(
      (await logEntries(log)).some((e) =>
        e.msg === "certificate not allowed by the on-demand permission endpoint" &&
        e.identifier === "no.test" && e.status === 403
      ),
    );
  } finally {
    await server.stop();
    await ask.shutdown();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("on-demand TLS: config errors name the field", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ on_demand: { ask: "ftp://x" } }, /on_demand\.ask: must be an http or https URL/],
    [
      { on_demand: { ask: "http://a", permission: { module: "http", endpoint: "http://b" } } },
      /give one/,
    ],
    [{ on_demand: { permission: { module: "dns" } } }, /permission\.module: only "http"/],
    [{ on_demand: { rate_limit: { interval: "1m" } } }, /burst \(a positive integer\)/],
    [{ on_demand: { nope: 1 } }, /unknown field "nope"/],
    [{ policies: [{ on_demand: "yes" }] }, /on_demand: must be a boolean/],
  ];
  for (const [automation, re] of cases) {
    await assert.rejects(
      startServer({
        config: {
          logging: { logs: { default: { writer: { output: "discard" } } } },
          apps: { tls: { automation } },
        },
      }),
      re,
      JSON.stringify(automation),
    );
  }
});
