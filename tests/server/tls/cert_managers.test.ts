/**
 * `get_certificate` managers and servers with TLS but no certificate:
 *
 * - `http`: a certificate fetched from a URL during the handshake (server_name and local_ip
 *   sent), served and verified by curl; 204 means none (the handshake fails and nothing is
 *   obtained); an error status fails the handshake; the node engine asks at every handshake.
 * - `tailscale` is refused at load with its reason.
 * - `automatic_https.disable` with a connection policy and no certificate loads, as in Caddy,
 *   with a warning; its handshakes fail.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tempFile, tlsServer } from "./_helpers.ts";
import { fileLogging, logEntries, waitFor } from "../acme/_server.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { generateKey, makeLeaf, makeRoot } from "../../../lib/server/pki/x509.ts";

/** A CA and an endpoint answering the way Caddy's http certificate manager expects. */
async function certEndpoint() {
  const rootKey = await generateKey();
  const root = await makeRoot("Manager Test Root", rootKey);
  const leafKey = await generateKey();
  const leaf = await makeLeaf(["ext.localhost"], leafKey.keys.publicKey, root.pem, rootKey);
  const asked: URLSearchParams[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const q = new URL(req.url).searchParams;
    asked.push(q);
    const name = q.get("server_name");
    if (name === "ext.localhost") return new Response(leaf.pem + root.pem + leafKey.pem);
    if (name === "broken.localhost") return new Response("down", { status: 500 });
    return new Response(null, { status: 204 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/get`, asked, rootPem: root.pem, server };
}

for (const engine of ["deno", "node"] as const) {
  Deno.test(`get_certificate http (${engine} engine): the certificate comes from the URL at handshake time`, async () => {
    const ep = await certEndpoint();
    const port = freePort();
    const names = ["ext.localhost", "none.localhost", "broken.localhost"];
    const srv = await tlsServer({
      apps: {
        http: {
          http_port: freePort(),
          https_port: port,
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              listener_engine: engine,
              routes: names.map((h) => ({
                match: [{ host: [h] }],
                handle: [{ handler: "static_response", body: `hi ${h}` }],
              })),
            },
          },
        },
        tls: {
          automation: {
            policies: [{ subjects: names, get_certificate: [{ via: "http", url: ep.url }] }],
          },
        },
      },
    });
    const dir = await Deno.makeTempDir();
    try {
      const ca = await tempFile(dir, "root.pem", ep.rootPem);
      const r = await curl(`https://ext.localhost:${port}/`, {
        ca,
        resolve: `ext.localhost:${port}:127.0.0.1`,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.body, "hi ext.localhost");
      const q = ep.asked.find((a) => a.get("server_name") === "ext.localhost")!;
      assert.equal(q.get("local_ip"), "127.0.0.1");
      for (const name of ["none.localhost", "broken.localhost"]) {
        assert.equal(await servedCert(port, name), null, `${name}: no certificate`);
        assert.ok(ep.asked.some((a) => a.get("server_name") === name), `${name} was asked`);
      }
      // nothing was obtained by an issuer for the managers' names
      assert.equal(await Deno.stat(`${srv.storage}/certificates`).catch(() => null), null);
      if (engine === "node") {
        const before = ep.asked.filter((a) => a.get("server_name") === "ext.localhost").length;
        assert.ok(await servedCert(port, "ext.localhost"));
        const after = ep.asked.filter((a) => a.get("server_name") === "ext.localhost").length;
        assert.equal(after, before + 1, "asked again at the next handshake");
      }
    } finally {
      await srv.stop();
      await ep.server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("get_certificate: tailscale is refused by name; http needs a URL", async () => {
  const policy = (m: Record<string, unknown>) => ({
    apps: { tls: { automation: { policies: [{ subjects: ["a.com"], get_certificate: [m] }] } } },
  });
  await assert.rejects(
    validateConfig(policy({ via: "tailscale" })),
    /tls\.get_certificate\.tailscale is not available here: Gatehouse cannot get certificates from a local Tailscale daemon/,
  );
  await assert.rejects(validateConfig(policy({ via: "http" })), /url: required/);
  await validateConfig(policy({ via: "http", url: "http://127.0.0.1:1/get" }));
});

Deno.test("auto_https off with a connection policy and no certificate: loads with a warning, handshakes fail", async () => {
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const log = `${dir}/server.log`;
  const srv = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            routes: [{ match: [{ host: ["localhost"] }], terminal: true }],
            tls_connection_policies: [{}],
            automatic_https: { disable: true },
          },
        },
      },
    },
  });
  try {
    const warning = await waitFor(
      async () =>
        (await logEntries(log)).find((e) =>
          e.level === "warn" && String(e.msg).startsWith("server has TLS connection policies")
        ),
      5_000,
      "the warning",
    );
    assert.equal(warning.server_name, "srv0");
    assert.equal(await servedCert(port, "localhost"), null);
    assert.equal(await Deno.stat(`${srv.storage}/certificates`).catch(() => null), null);
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
