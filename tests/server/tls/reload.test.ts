/**
 * Live certificates: a reload that swaps the certificate of a name, and internal certificates
 * renewed inside their renewal window, both without a restart, while clients send requests all
 * along (HTTP/2 and HTTP/1.1 keep-alive connections, a new connection per request, a request in
 * flight across the change). Both listener engines, and no request fails on either.
 *
 * The node engine picks the certificate per handshake. The deno engine replaces its listener
 * when the certificate it serves changes (Deno keeps its answer per listener): the old listener
 * closes without touching the connections it accepted (docs/server.md, "HTTPS").
 */
import assert from "node:assert/strict";
import { generateKey, makeLeaf, makeRoot } from "../../../lib/server/pki/x509.ts";
import { freePort, servedCert, tlsServer } from "./_helpers.ts";

/** Clients that keep sending requests until stopped; counts successes and failures. */
function load(url: string, ca: string, slowUrl: string) {
  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const loop = async (opts: Deno.CreateHttpClientOptions, fresh: boolean, failures: string[]) => {
    let client = Deno.createHttpClient({ caCerts: [ca], ...opts });
    while (!stop) {
      try {
        const r = await fetch(url, { client });
        if (r.status !== 200 || (await r.text()) !== "hi") failures.push(`status ${r.status}`);
        else ok++;
      } catch (e) {
        failures.push(`${(e as Error).message}: ${String((e as Error).cause ?? "")}`);
      }
      if (fresh) {
        client.close();
        client = Deno.createHttpClient({ caCerts: [ca], ...opts });
      }
    }
    client.close();
  };
  const slow = (async () => {
    const client = Deno.createHttpClient({ caCerts: [ca], http2: false });
    try {
      const r = await fetch(slowUrl, { client });
      return await r.text();
    } finally {
      client.close();
    }
  })();
  const fresh: string[] = [];
  const loops = [
    loop({}, false, failures), // HTTP/2, one connection
    loop({ http2: false }, false, failures), // HTTP/1.1 keep-alive
    loop({ http2: false }, true, fresh), // a new connection per request
  ];
  return {
    slow,
    async stop() {
      stop = true;
      await Promise.all(loops);
      return { ok, failures, fresh };
    },
  };
}

/** New-connection failures: none, on either engine. */
function checkFresh(_engine: string, fresh: string[], _replacements: number): void {
  assert.deepEqual(fresh, []);
}

function routes() {
  return [
    {
      match: [{ path: ["/slow"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial: "SLOW" }] }],
    },
    { handle: [{ handler: "static_response", body: "hi" }] },
  ];
}

/** A plain HTTP upstream that answers after 1.5 s. */
function slowUpstream(): { port: number; close(): Promise<void> } {
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await new Promise((r) => setTimeout(r, 1500));
    return new Response("slow done");
  });
  return { port: (s.addr as Deno.NetAddr).port, close: () => s.shutdown() };
}

function server(
  port: number,
  engine: string,
  upstream: number,
  extra: Record<string, unknown> = {},
) {
  const r = routes();
  (r[0].handle[0] as { upstreams: { dial: string }[] }).upstreams[0].dial = `127.0.0.1:${upstream}`;
  return {
    listen: [`127.0.0.1:${port}`],
    listener_engine: engine,
    automatic_https: { disable_redirects: true },
    tls_connection_policies: [{}],
    routes: [{ match: [{ host: ["localhost"] }], handle: [{ handler: "subroute", routes: r }] }],
    ...extra,
  };
}

for (const engine of ["deno", "node"] as const) {
  Deno.test(`tls (${engine} engine): a reload swaps the certificate of a name with no failed request`, async () => {
    const caKey = await generateKey();
    const ca = await makeRoot("Reload Test Root", caKey);
    const leaf = async () => {
      const k = await generateKey();
      return {
        certificate: (await makeLeaf(["localhost"], k.keys.publicKey, ca.pem, caKey)).pem,
        key: k.pem,
      };
    };
    const [a, b] = [await leaf(), await leaf()];
    const port = freePort();
    const up = slowUpstream();
    const cfg = (pem: { certificate: string; key: string }) => ({
      apps: {
        tls: { certificates: { load_pem: [pem] } },
        http: { servers: { srv0: server(port, engine, up.port) } },
      },
    });
    const srv = await tlsServer(cfg(a));
    try {
      const before = await servedCert(port, "localhost");
      const clients = load(`https://localhost:${port}/`, ca.pem, `https://localhost:${port}/slow`);
      await new Promise((r) => setTimeout(r, 400));
      await srv.load(cfg(b));
      // (deno engine: the listener is replaced; new handshakes get the new certificate)
      let after = await servedCert(port, "localhost");
      for (let i = 0; i < 50 && after?.serial === before?.serial; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await servedCert(port, "localhost");
      }
      await new Promise((r) => setTimeout(r, 500)); // clients keep going on the new listener
      const result = await clients.stop();
      assert.equal(
        await clients.slow,
        "slow done",
        "the request in flight across the reload completed",
      );
      assert.notEqual(after?.serial, before?.serial, "new handshakes get the new certificate");
      assert.deepEqual(result.failures, []);
      checkFresh(engine, result.fresh, 1);
      assert.ok(result.ok > 10, `requests were served all along (${result.ok})`);
    } finally {
      await srv.stop();
      await up.close();
    }
  });

  Deno.test(`tls (${engine} engine): internal certificates renew inside their window without a restart or a failed request`, async () => {
    const port = freePort();
    const up = slowUpstream();
    const srv = await tlsServer({
      apps: {
        tls: {
          automation: {
            renew_interval: "100ms",
            policies: [{
              subjects: ["localhost"],
              issuers: [{ module: "internal", lifetime: "6s" }],
            }],
          },
        },
        http: { servers: { srv0: server(port, engine, up.port) } },
      },
    });
    try {
      const root = await srv.rootPem();
      const first = await servedCert(port, "localhost");
      assert.ok(first);
      const clients = load(`https://localhost:${port}/`, root, `https://localhost:${port}/slow`);
      const seen = new Set([first.serial]);
      const end = Date.now() + 25_000;
      while (seen.size < 3 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 200));
        const c = await servedCert(port, "localhost");
        if (c) seen.add(c.serial);
      }
      const result = await clients.stop();
      assert.ok(seen.size >= 3, `renewed twice (${seen.size - 1} renewals seen)`);
      assert.equal(await clients.slow, "slow done");
      assert.deepEqual(result.failures, []);
      checkFresh(engine, result.fresh, seen.size - 1);
      // what is served is also what storage holds (for the other instances)
      const stored = await Deno.readTextFile(
        `${srv.storage}/certificates/local/localhost/localhost.crt`,
      );
      assert.match(stored, /BEGIN CERTIFICATE/);
    } finally {
      await srv.stop();
      await up.close();
    }
  });
}
