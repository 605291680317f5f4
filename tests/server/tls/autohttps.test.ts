/**
 * Automatic HTTPS as Caddy's: HTTP → HTTPS redirects on `http_port`, the `automatic_https`
 * options, internal names getting the internal issuer, an explicit internal policy for a
 * public name (`tls internal`).
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, sites, tempFile, tlsServer } from "./_helpers.ts";

async function refused(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return false;
  } catch (e) {
    return e instanceof Deno.errors.ConnectionRefused;
  }
}

Deno.test("automatic HTTPS: 308 redirects from http_port, Caddy's Location rules, catch-all", async () => {
  const https = freePort();
  const other = freePort();
  const http = freePort();
  const srv = await tlsServer({
    apps: {
      http: {
        http_port: http,
        https_port: https,
        servers: {
          main: {
            listen: [`127.0.0.1:${https}`],
            routes: [{
              match: [{ host: ["a.localhost"] }],
              handle: [{ handler: "static_response", body: "a" }],
            }],
          },
          alt: {
            listen: [`127.0.0.1:${other}`],
            routes: [{
              match: [{ host: ["b.localhost"] }],
              handle: [{ handler: "static_response", body: "b" }],
            }],
          },
        },
      },
    },
  });
  try {
    const get = (host: string, path: string) =>
      curl(`http://${host}:${http}${path}`, { resolve: `${host}:${http}:127.0.0.1` });
    let r = await get("a.localhost", "/x/y?z=1");
    assert.equal(r.status, 308);
    assert.match(
      r.headers,
      /\r\nlocation: https:\/\/a\.localhost\/x\/y\?z=1\r\n/i,
      "https_port: no port",
    );
    assert.match(r.headers, /\r\nconnection: close\r\n/i);
    r = await get("b.localhost", "/p");
    assert.match(
      r.headers,
      new RegExp(`\\r\\nlocation: https://b\\.localhost:${other}/p\\r\\n`, "i"),
    );
    r = await get("elsewhere.localhost", "/q");
    assert.equal(r.status, 308, "any other host is sent to the HTTPS port");
    assert.match(r.headers, /\r\nlocation: https:\/\/elsewhere\.localhost\/q\r\n/i);
    // the config shown is the one loaded, without the generated redirect server
    const cfg = await (await fetch(`${srv.admin}/config/apps/http/servers`, {
      headers: { origin: srv.admin },
    })).json();
    assert.deepEqual(Object.keys(cfg).sort(), ["alt", "main"]);
  } finally {
    await srv.stop();
  }
});

Deno.test("automatic HTTPS options: disable, disable_redirects, skip, skip_certificates, disable_certificates, ignore_loaded_certificates", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const http = freePort();
  const app = { http_port: http, https_port: port };
  // (A reload cannot turn one address from plain HTTP to HTTPS: the disabled server uses its
  // own port.)
  const plain = freePort();
  const srv = await tlsServer({
    apps: sites(plain, ["a.localhost"], { automatic_https: { disable: true } }, app),
  });
  try {
    // disable: plain HTTP on the port, nothing obtained, no redirect listener
    let r = await curl(`http://127.0.0.1:${plain}/`, { extra: ["-H", "Host: a.localhost"] });
    assert.equal(r.body, "hi a.localhost");
    assert.equal(await refused(http), true);
    assert.equal(await Deno.stat(`${srv.storage}/certificates`).catch(() => null), null);

    // disable_redirects: HTTPS, and nothing listens on http_port
    await srv.load({
      apps: sites(port, ["a.localhost"], { automatic_https: { disable_redirects: true } }, app),
    });
    const ca = await tempFile(dir, "root.pem", await srv.rootPem());
    r = await curl(`https://a.localhost:${port}/`, {
      ca,
      resolve: `a.localhost:${port}:127.0.0.1`,
    });
    assert.equal(r.body, "hi a.localhost");
    assert.equal(await refused(http), true);

    // skip: the name is neither managed nor redirected; skip_certificates: not managed only
    await srv.load({
      apps: sites(port, ["a.localhost", "b.localhost", "c.localhost"], {
        automatic_https: { skip: ["b.localhost"], skip_certificates: ["c.localhost"] },
      }, app),
    });
    assert.ok(await servedCert(port, "a.localhost"));
    assert.equal(await servedCert(port, "b.localhost"), null);
    assert.equal(await servedCert(port, "c.localhost"), null);
    assert.equal(
      await Deno.stat(`${srv.storage}/certificates/local/b.localhost`).catch(() => null),
      null,
    );
    assert.equal(
      await Deno.stat(`${srv.storage}/certificates/local/c.localhost`).catch(() => null),
      null,
    );
    r = await curl(`http://b.localhost:${http}/`, { resolve: `b.localhost:${http}:127.0.0.1` });
    assert.equal(r.status, 308, "the catch-all still redirects");
    r = await curl(`http://c.localhost:${http}/`, { resolve: `c.localhost:${http}:127.0.0.1` });
    assert.equal(r.status, 308);

    // disable_certificates with nothing loaded: loads as in Caddy (with a warning), and
    // handshakes fail: no certificate is made for the name
    await srv.load({
      apps: sites(
        port,
        ["d.localhost"],
        { automatic_https: { disable_certificates: true } },
        app,
      ),
    });
    assert.equal(await servedCert(port, "d.localhost"), null);
    assert.equal(
      await Deno.stat(`${srv.storage}/certificates/local/d.localhost`).catch(() => null),
      null,
    );
    await srv.load({ apps: sites(port, ["a.localhost"], {}, app) });
    assert.ok(await servedCert(port, "a.localhost"));

    // a loaded certificate covering the name: not managed, unless ignore_loaded_certificates
    const aPem = await Deno.readTextFile(
      `${srv.storage}/certificates/local/a.localhost/a.localhost.crt`,
    );
    const aKey = await Deno.readTextFile(
      `${srv.storage}/certificates/local/a.localhost/a.localhost.key`,
    );
    const loaded = { certificates: { load_pem: [{ certificate: aPem, key: aKey }] } };
    const storage2 = await Deno.makeTempDir();
    const srv2 = await tlsServer({
      apps: { tls: loaded, ...sites(freePort(), ["a.localhost"], {}, { http_port: freePort() }) },
    }, storage2);
    try {
      assert.equal(await Deno.stat(`${storage2}/certificates`).catch(() => null), null);
      const p3 = freePort();
      await srv2.load({
        apps: {
          tls: loaded,
          ...sites(p3, ["a.localhost"], { automatic_https: { ignore_loaded_certificates: true } }, {
            http_port: freePort(),
          }),
        },
      });
      let stored = null;
      for (let i = 0; i < 100 && !stored; i++) {
        stored = await Deno.stat(`${storage2}/certificates/local/a.localhost/a.localhost.crt`)
          .catch(() => null);
        if (!stored) await new Promise((res) => setTimeout(res, 50));
      }
      assert.ok(stored, "managed although a loaded certificate covers it");
    } finally {
      await srv2.stop();
      await Deno.remove(storage2, { recursive: true });
    }
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("automatic HTTPS: internal names get the internal issuer; a public name can have an internal policy", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const app = { http_port: freePort(), https_port: port };
  const srv = await tlsServer({
    apps: sites(port, ["127.0.0.1", "x.internal", "y.local"], {}, app),
  });
  try {
    const ca = await tempFile(dir, "root.pem", await srv.rootPem());
    // an IP has no SNI: the listener's IP picks its certificate
    const r = await curl(`https://127.0.0.1:${port}/`, { ca });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.body, "hi 127.0.0.1");
    assert.deepEqual((await servedCert(port, "x.internal"))?.names, ["x.internal"]);
    assert.deepEqual((await servedCert(port, "y.local"))?.names, ["y.local"]);

    // `tls internal` for it: an automation policy with the internal issuer
    await srv.load({
      apps: {
        ...sites(port, ["example.com"], {}, app),
        tls: {
          automation: {
            policies: [{ subjects: ["example.com"], issuers: [{ module: "internal" }] }],
          },
        },
      },
    });
    const ok = await curl(`https://example.com:${port}/`, {
      ca,
      resolve: `example.com:${port}:127.0.0.1`,
    });
    assert.equal(ok.body, "hi example.com");
    // refused options are named
    for (
      const [policy, msg] of [
        [{ on_demand: "yes" }, /on_demand: must be a boolean/],
        [{ key_type: "rsa1024" }, /key_type: unknown key type "rsa1024"/],
        [{ issuers: [{ module: "acme", ca: "ftp://x" }] }, /ca: an ACME directory must use https/],
        [{ issuers: [{ module: "internal", lifetme: "1h" }] }, /unknown field "lifetme"/],
      ] as const
    ) {
      await assert.rejects(
        srv.load({
          apps: {
            ...sites(port, ["example.com"], {}, app),
            tls: { automation: { policies: [policy] } },
          },
        }),
        msg,
      );
    }
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
