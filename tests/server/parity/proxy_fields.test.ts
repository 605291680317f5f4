/**
 * `reverse_proxy` fields beyond routing: dial addresses from request placeholders (a `map`
 * output), request and response buffers, `trusted_proxies_unix`, the stream settings
 * (`stream_timeout`, `stream_close_delay`, `stream_buffer_size`) on real byte streams, and
 * transport fields the upstream client cannot honour refused by name.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { Streams } from "../../../lib/server/http/handlers/reverse_proxy/streams.ts";
import type { Tunnel } from "../../../lib/server/module/listener.ts";
import { startUpstream } from "./upstream_fixture.ts";

Deno.test("reverse_proxy: a dial address from a map output, chosen per request", async () => {
  const a = startUpstream("a");
  const b = startUpstream("b");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [
            {
              handler: "map",
              source: "{http.request.host}",
              destinations: ["{upstream}"],
              mappings: [{ input: "a.test", outputs: [a.dial] }],
              defaults: [b.dial],
            },
            { handler: "reverse_proxy", upstreams: [{ dial: "{upstream}" }] },
          ],
        }],
      },
    },
  });
  try {
    const viaA = await raw(srv.url(), "GET", "/x", { host: "a.test" });
    assert.equal(viaA.headers.get("x-upstream"), "a");
    const viaB = await raw(srv.url(), "GET", "/x", { host: "other.test" });
    assert.equal(viaB.headers.get("x-upstream"), "b");
    const pool = await (await srv.admin("/reverse_proxy/upstreams")).json();
    assert.deepEqual(pool.map((u: { address: string }) => u.address), ["{upstream}"]);
  } finally {
    await srv.stop();
    await a.stop();
    await b.stop();
  }
});

Deno.test("reverse_proxy: request_buffers sends a fully read body with a Content-Length", async () => {
  const up = startUpstream("up");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/buffered"] }],
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: up.dial }],
              request_buffers: 4096,
              response_buffers: -1,
            }],
            terminal: true,
          },
          {
            match: [{ path: ["/small-buffer"] }],
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: up.dial }],
              request_buffers: 4,
            }],
            terminal: true,
          },
          { handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] }] },
        ],
      },
    },
  });
  // a streamed body goes out chunked, with no Content-Length
  const post = async (path: string) => {
    const parts = ["hello", " world"].map((p) => new TextEncoder().encode(p));
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = parts.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const res = await fetch(
      srv.url() + path,
      { method: "POST", body, duplex: "half" } as RequestInit,
    );
    return { text: await res.text() };
  };
  try {
    const r1 = await post("/buffered");
    assert.equal(JSON.parse(r1.text).body, "hello world");
    assert.equal(up.seen.at(-1)!.headers["content-length"], "11");
    assert.equal(up.seen.at(-1)!.headers["transfer-encoding"], undefined);

    const r2 = await post("/small-buffer");
    assert.equal(JSON.parse(r2.text).body, "hello world", "the rest streams after the buffer");
    assert.equal(up.seen.at(-1)!.headers["content-length"], undefined);

    const r3 = await post("/plain");
    assert.equal(JSON.parse(r3.text).body, "hello world");
    assert.equal(up.seen.at(-1)!.headers["transfer-encoding"], "chunked", "streamed by default");
  } finally {
    await srv.stop();
    await up.stop();
  }
});

Deno.test("trusted_proxies_unix: unix socket peers are trusted proxies only when set", async () => {
  const up = startUpstream("up");
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-unix-trust-" });
  const server = (name: string, trusted: boolean) => ({
    listen: [`unix/${dir}/${name}.sock`],
    ...(trusted ? { trusted_proxies_unix: true } : {}),
    routes: [
      {
        match: [{ path: ["/ip"] }],
        handle: [{ handler: "static_response", body: "client={http.request.client_ip}" }],
        terminal: true,
      },
      { handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] }] },
    ],
  });
  const srv = await startHttp({
    servers: { yes: server("yes", true), no: server("no", false) },
  });
  const viaSocket = async (name: string, path: string) => {
    const client = Deno.createHttpClient(
      { proxy: { transport: "unix", path: `${dir}/${name}.sock` } } as Deno.CreateHttpClientOptions,
    );
    try {
      const res = await fetch(`http://localhost${path}`, {
        client,
        headers: {
          "x-forwarded-for": "203.0.113.9",
          "x-forwarded-proto": "https",
          "x-forwarded-host": "front.test",
        },
      });
      return await res.text();
    } finally {
      client.close();
    }
  };
  try {
    assert.equal(await viaSocket("yes", "/ip"), "client=203.0.113.9");
    assert.equal(await viaSocket("no", "/ip"), "client=");
    const trusted = JSON.parse(await viaSocket("yes", "/echo")).headers;
    assert.equal(trusted["x-forwarded-for"], "203.0.113.9");
    assert.equal(trusted["x-forwarded-proto"], "https");
    assert.equal(trusted["x-forwarded-host"], "front.test");
    const untrusted = JSON.parse(await viaSocket("no", "/echo")).headers;
    assert.equal(untrusted["x-forwarded-for"], undefined, "stripped from an untrusted socket");
    assert.equal(untrusted["x-forwarded-proto"], undefined);
    assert.equal(untrusted["x-forwarded-host"], undefined);
  } finally {
    await srv.stop();
    await up.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** An in-memory tunnel end: what is written to it, and a source to read from. */
function memoryTunnel(source: Uint8Array[]) {
  const written: number[] = [];
  let closed = false;
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const t: Tunnel & { written: number[]; closed: () => boolean; end(): void } = {
    readable: new ReadableStream({
      start(c) {
        feed = c;
        for (const s of source) c.enqueue(s);
      },
    }),
    writable: new WritableStream({ write: (chunk) => void written.push(chunk.length) }),
    close() {
      closed = true;
      try {
        feed.close();
      } catch { /* closed */ }
    },
    written,
    closed: () => closed,
    end: () => feed.close(),
  };
  return t;
}

Deno.test("stream settings: buffer size caps each copy, timeout and unload close streams", async () => {
  const s = new Streams({ timeoutMs: 0, closeDelayMs: 0, bufferSize: 1000 });
  const client = memoryTunnel([new Uint8Array(2500)]);
  const upstream = memoryTunnel([new Uint8Array(1500), new Uint8Array(10)]);
  s.relay(client, upstream);
  client.end();
  upstream.end();
  while (!client.closed()) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(upstream.written, [1000, 1000, 500]);
  assert.deepEqual(client.written, [1000, 500, 10]);

  const timed = new Streams({ timeoutMs: 20, closeDelayMs: 0, bufferSize: 1000 });
  const c2 = memoryTunnel([]);
  const u2 = memoryTunnel([]);
  timed.relay(c2, u2);
  assert.equal(timed.size, 1);
  while (!c2.closed()) await new Promise((r) => setTimeout(r, 5));
  assert.ok(u2.closed(), "stream_timeout closes both ends");
  assert.equal(timed.size, 0);

  const unloaded = new Streams({ timeoutMs: 0, closeDelayMs: 0, bufferSize: 1000 });
  const c3 = memoryTunnel([]);
  const u3 = memoryTunnel([]);
  unloaded.relay(c3, u3);
  unloaded.closeAll();
  assert.ok(c3.closed() && u3.closed(), "closed when the config is unloaded");

  const delayed = new Streams({ timeoutMs: 0, closeDelayMs: 30, bufferSize: 1000 });
  const c4 = memoryTunnel([]);
  const u4 = memoryTunnel([]);
  delayed.relay(c4, u4);
  delayed.closeAll();
  assert.ok(!c4.closed(), "stream_close_delay keeps it open for a while");
  while (!c4.closed()) await new Promise((r) => setTimeout(r, 5));
});

Deno.test("reverse_proxy: transport fields the client cannot honour are refused by name", async () => {
  const proxy = (transport: Record<string, unknown>) => ({
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:0"],
            routes: [{
              handle: [{
                handler: "reverse_proxy",
                upstreams: [{ dial: "127.0.0.1:9" }],
                transport: { protocol: "http", ...transport },
              }],
            }],
          },
        },
      },
    },
  });
  await validateConfig(proxy({ compression: false, versions: ["1.1"], dial_timeout: "2s" }));
  for (
    const [t, re] of [
      [
        { versions: ["3"] },
        /transport\.versions: not supported .*HTTP\/3 runs over QUIC, which is always TLS: add tls/,
      ],
      [{ versions: ["4"] }, /transport\.versions: not supported .*version "4"/],
      [{ write_buffer_size: -1 }, /transport\.write_buffer_size: must be a whole number/],
      [{ tls: { renegotiation: "sometimes" } }, /tls\.renegotiation: unknown value "sometimes"/],
      [{ read_timeout: "1s" }, /transport\.read_timeout: not supported/],
      [{ network_proxy: { from: "env" } }, /network_proxy: not supported/],
      [
        { network_proxy: { from: "url", url: "socks5://p:1080" } },
        /only http:\/\/ forward proxies/,
      ],
      [{ tls: { ca: { provider: "http" } } }, /trust pool provider "http" is not available/],
      [{ bogus: 1 }, /unknown field "bogus"/],
    ] as [Record<string, unknown>, RegExp][]
  ) {
    await assert.rejects(validateConfig(proxy(t)), re);
  }
  await assert.rejects(
    validateConfig(proxy({ protocol: "http_ntlm" })),
    /unsupported transport protocol http_ntlm \(module http\.reverse_proxy\.transport\.http_ntlm\)/,
  );
});

Deno.test("reverse_proxy: a TLS upstream verified against the configured trust pool only", async () => {
  const { makePki } = await import("../http/pki.ts");
  const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const up = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: pki.leafs.up.cert,
      key: pki.leafs.up.key,
      onListen() {},
    },
    (req) => new Response(`secure ${new URL(req.url).pathname}`),
  );
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const der = pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "");
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-ca-" });
  await Deno.writeTextFile(`${dir}/ca.pem`, pki.caPem);
  const route = (path: string, tls: Record<string, unknown>) => ({
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial }],
      transport: {
        protocol: "http",
        tls: { server_name: "localhost", ...tls },
        network_proxy: { from: "none" },
      },
    }],
    terminal: true,
  });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          route("/inline", { ca: { provider: "inline", trusted_ca_certs: [der] } }),
          route("/file", { ca: { provider: "file", pem_files: [`${dir}/ca.pem`] } }),
          route("/legacy", { root_ca_pool: [der] }),
          route("/system", {}),
        ],
      },
    },
  });
  try {
    assert.equal((await raw(srv.url(), "GET", "/inline")).text, "secure /inline");
    assert.equal((await raw(srv.url(), "GET", "/file")).text, "secure /file");
    assert.equal((await raw(srv.url(), "GET", "/legacy")).text, "secure /legacy");
    assert.equal((await raw(srv.url(), "GET", "/system")).status, 502, "not trusted by the system");
  } finally {
    await srv.stop();
    await up.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reverse_proxy: network_proxy from url sends requests through a forward proxy", async () => {
  const up = startUpstream("up");
  const seen: { url: string; auth: string | null }[] = [];
  // a small forward proxy: takes absolute-form requests and fetches them
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push({ url: req.url, auth: req.headers.get("proxy-authorization") });
    const res = await fetch(req.url, { headers: { "x-via-proxy": "1" } });
    return new Response(await res.text(), { status: res.status, headers: { "x-proxied": "1" } });
  });
  const proxyUrl = `http://ann:s3cret@127.0.0.1:${(proxy.addr as Deno.NetAddr).port}`;
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{
            handler: "reverse_proxy",
            upstreams: [{ dial: up.dial }],
            transport: { protocol: "http", network_proxy: { from: "url", url: proxyUrl } },
          }],
        }],
      },
    },
  });
  try {
    const r = await raw(srv.url(), "GET", "/through?x=1");
    assert.equal(r.headers.get("x-proxied"), "1");
    assert.equal(JSON.parse(r.text).uri, "/through?x=1");
    assert.equal(seen.at(-1)!.url, `http://${up.dial}/through?x=1`, "absolute-form target");
    assert.equal(seen.at(-1)!.auth, `Basic ${btoa("ann:s3cret")}`);
    assert.equal(up.seen.at(-1)!.headers["x-via-proxy"], "1");
  } finally {
    await srv.stop();
    await proxy.shutdown();
    await up.stop();
  }
});

Deno.test("reverse_proxy: local_address dials upstreams from the chosen address", async () => {
  const up = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (_req, info) => new Response(`from ${(info.remoteAddr as Deno.NetAddr).hostname}`),
  );
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const route = (path: string, transport: Record<string, unknown>) => ({
    match: [{ path: [path] }],
    handle: [{ handler: "reverse_proxy", upstreams: [{ dial }], transport }],
    terminal: true,
  });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          route("/chosen", { protocol: "http", local_address: "127.0.0.2" }),
          route("/default", { protocol: "http" }),
        ],
      },
    },
  });
  try {
    assert.equal((await raw(srv.url(), "GET", "/chosen")).text, "from 127.0.0.2");
    assert.equal((await raw(srv.url(), "GET", "/default")).text, "from 127.0.0.1");
    await assert.rejects(
      validateConfig({
        apps: {
          http: {
            servers: {
              s: {
                listen: [":0"],
                routes: [route("/x", { protocol: "http", local_address: "eth0" })],
              },
            },
          },
        },
      }),
      /local_address: not an IP address/,
    );
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});

Deno.test("reverse_proxy: versions h2c and 2 speak HTTP/2 to the upstream", async () => {
  const http2 = (await import("node:http2")).default;
  const { makePki } = await import("../http/pki.ts");
  const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const answer = (
    req: import("node:http2").Http2ServerRequest,
    res: import("node:http2").Http2ServerResponse,
  ) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => body += d);
    req.on("end", () => {
      res.setHeader("x-upstream-proto", req.httpVersion);
      res.end(
        `HTTP/${req.httpVersion} ${req.method} ${req.url} authority=${req.headers[":authority"]} ` +
          `xff=${req.headers["x-forwarded-for"]} body=${body}`,
      );
    });
  };
  const h2c = http2.createServer(answer);
  const h2 = http2.createSecureServer({ cert: pki.leafs.up.cert, key: pki.leafs.up.key }, answer);
  const listen = (s: typeof h2c | typeof h2) =>
    new Promise<number>((r) =>
      s.listen(0, "127.0.0.1", () => r((s.address() as { port: number }).port))
    );
  const [plainPort, tlsPort] = [await listen(h2c), await listen(h2)];
  const der = pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/tls/*"] }],
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: `127.0.0.1:${tlsPort}` }],
              transport: {
                protocol: "http",
                versions: ["2"],
                tls: {
                  server_name: "localhost",
                  ca: { provider: "inline", trusted_ca_certs: [der] },
                },
              },
            }],
            terminal: true,
          },
          {
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: `127.0.0.1:${plainPort}` }],
              transport: { protocol: "http", versions: ["h2c", "2"] },
            }],
          },
        ],
      },
    },
  });
  try {
    const plain = await raw(srv.url(), "POST", "/p?q=1", {
      host: "site.test",
      "content-type": "text/plain",
    }, "hi");
    assert.equal(plain.text, "HTTP/2.0 POST /p?q=1 authority=site.test xff=127.0.0.1 body=hi");
    assert.equal(plain.headers.get("x-upstream-proto"), "2.0");
    // several requests share the one session
    for (let i = 0; i < 3; i++) assert.equal((await raw(srv.url(), "GET", `/n${i}`)).status, 200);
    const tls = await raw(srv.url(), "GET", "/tls/x", { host: "site.test" });
    assert.equal(tls.text, "HTTP/2.0 GET /tls/x authority=site.test xff=127.0.0.1 body=");
    await assert.rejects(
      validateConfig({
        apps: {
          http: {
            servers: {
              s: {
                listen: [":0"],
                routes: [{
                  handle: [{
                    handler: "reverse_proxy",
                    upstreams: [{ dial: "127.0.0.1:1" }],
                    transport: { protocol: "http", versions: ["1.1", "2"], tls: {} },
                  }],
                }],
              },
            },
          },
        },
      }),
      /versions: not supported .*ALPN/,
    );
  } finally {
    await srv.stop();
    await new Promise((r) => h2c.close(r));
    await new Promise((r) => h2.close(r));
  }
});
