/**
 * Fields of the fastcgi transport, dynamic upstreams, acme_server and client authentication
 * that their own suites do not set: the fastcgi `write_timeout` (a request the upstream does not
 * read is cut), the `a` source's `versions.ipv6` (AAAA records only) with `dial_fallback_delay`
 * (accepted as Caddy does: it races TCP dials, and lookups are UDP), acme_server's `host` (the
 * directory's URLs) and `allow_wildcard_names`, and the `storage` field of client
 * authentication's trust pools and leaf loaders (refused: the configured storage is used).
 */
import assert from "node:assert/strict";
import acme from "acme-client";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { freePort, serve, startHttp } from "../http/harness.ts";
import { challtestsrvAvailable, startChallTestSrv } from "../parity2/dns_servers.ts";

Deno.test("fastcgi write_timeout: a request body the upstream does not read is cut with 504", async () => {
  // a FastCGI "server" that accepts and never reads
  const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of upstream) held.push(c);
  })();
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}` }],
      transport: { protocol: "fastcgi", root: "/tmp", write_timeout: "300ms" },
    }],
  }]);
  const port = Number(new URL(srv.url()).port);
  const client = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    // 64 MiB: far more than the socket buffers between the server and the upstream hold
    const size = 64 << 20;
    await client.write(
      new TextEncoder().encode(
        `POST /index.php HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${size}\r\n\r\n`,
      ),
    );
    const chunk = new Uint8Array(1 << 16);
    let sent = 0;
    const sending = (async () => {
      try {
        while (sent < size) sent += await client.write(chunk);
      } catch { /* the server closed the connection after answering */ }
    })();
    const buf = new Uint8Array(4096);
    const n = await client.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    assert.match(head, /^HTTP\/1\.1 504 /);
    assert.ok(sent < size, "answered before the body was all sent");
    client.close();
    await sending;
  } finally {
    try {
      client.close();
    } catch { /* closed above */ }
    await srv.stop();
    upstream.close();
    await accepting.catch(() => {});
    for (const c of held) c.close();
  }
});

Deno.test({
  name:
    "dynamic upstreams a: versions.ipv6 looks up AAAA records only; dial_fallback_delay accepted",
  ignore: !challtestsrvAvailable(),
  async fn() {
    const dns = await startChallTestSrv();
    const port = freePort();
    const v4 = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response("v4"));
    const v6 = Deno.serve({ hostname: "::1", port, onListen() {} }, () => new Response("v6"));
    await dns.setA("both.test", ["127.0.0.1"]);
    await dns.setAAAA("both.test", ["::1"]);
    const source = (versions: Record<string, boolean>) => ({
      handler: "reverse_proxy",
      dynamic_upstreams: {
        source: "a",
        name: "both.test",
        port: String(port),
        resolver: { addresses: [`127.0.0.1:${dns.dnsPort}`] },
        dial_fallback_delay: "300ms",
        versions,
      },
    });
    const srv = await serve([
      { match: [{ path: ["/6"] }], handle: [source({ ipv6: true })] },
      { match: [{ path: ["/4"] }], handle: [source({ ipv4: true })] },
    ]);
    try {
      for (let i = 0; i < 3; i++) {
        assert.equal(await (await fetch(`${srv.url()}/6`)).text(), "v6");
        assert.equal(await (await fetch(`${srv.url()}/4`)).text(), "v4");
      }
    } finally {
      await srv.stop();
      await Promise.all([v4.shutdown(), v6.shutdown()]);
      await dns.stop();
    }
    await assert.rejects(
      validateConfig({
        admin: { disabled: true },
        apps: {
          http: {
            servers: {
              s: {
                listen: ["127.0.0.1:0"],
                routes: [{
                  handle: [{
                    handler: "reverse_proxy",
                    dynamic_upstreams: { source: "a", name: "x.test", dial_fallback_delay: "soon" },
                  }],
                }],
              },
            },
          },
        },
      }),
      /dial_fallback_delay/,
    );
  },
});

Deno.test("acme_server: host names the directory's URLs; allow_wildcard_names admits wildcard orders", async () => {
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-acme-fields-" });
  const routes = [
    {
      match: [{ path: ["/named/*"] }],
      handle: [{ handler: "acme_server", path_prefix: "/named/", host: "ca.example.test" }],
    },
    {
      match: [{ path: ["/wild/*"] }],
      handle: [{
        handler: "acme_server",
        path_prefix: "/wild/",
        policy: { allow_wildcard_names: true },
      }],
    },
    { handle: [{ handler: "acme_server" }] },
  ];
  const srv = await startHttp(
    { servers: { srv0: { listen: ["127.0.0.1:0"], routes } } },
    { storage: { module: "file_system", root: storage } },
  ).catch(async (e) => {
    await Deno.remove(storage, { recursive: true });
    throw e;
  });
  try {
    const named = await (await fetch(`${srv.url()}/named/local/directory`)).json();
    assert.equal(named.newNonce, "http://ca.example.test/named/local/new-nonce");
    const plain = await (await fetch(`${srv.url()}/acme/local/directory`)).json();
    assert.equal(plain.newNonce, `${srv.url()}/acme/local/new-nonce`);

    const order = async (prefix: string) => {
      const client = new acme.Client({
        directoryUrl: `${srv.url()}${prefix}local/directory`,
        accountKey: await acme.crypto.createPrivateEcdsaKey(),
      });
      await client.createAccount({ termsOfServiceAgreed: true });
      return await client.createOrder({ identifiers: [{ type: "dns", value: "*.wild.test" }] });
    };
    const made = await order("/wild/");
    assert.equal(made.status, "pending");
    await assert.rejects(order("/acme/"), /wildcard name \*\.wild\.test is not allowed/);
  } finally {
    await srv.stop();
    await Deno.remove(storage, { recursive: true });
  }
});

Deno.test("client authentication: a storage of its own in a trust pool or a leaf loader is refused", async () => {
  const config = (clientAuth: Record<string, unknown>) => ({
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:0"],
            routes: [],
            tls_connection_policies: [{ client_authentication: clientAuth }],
          },
        },
      },
    },
  });
  const own = { module: "file_system", root: "/tmp/elsewhere" };
  await assert.rejects(
    validateConfig(config({ ca: { provider: "storage", pem_keys: ["a.pem"], storage: own } })),
    /ca\.storage: a storage of its own is not supported; the configured storage is used/,
  );
  await assert.rejects(
    validateConfig(config({
      verifiers: [{
        verifier: "leaf",
        leaf_certs_loaders: [{ loader: "storage", certificates: ["a.pem"], storage: own }],
      }],
    })),
    /leaf_certs_loaders\[0\]\.storage: a storage of its own is not supported/,
  );
});
