import assert from "node:assert/strict";
import { freePort, serve, startHttp } from "./harness.ts";
import { raw } from "./raw.ts";

interface Backend {
  name: string;
  dial: string;
  hits: number;
  healthy: boolean;
  server: Deno.HttpServer;
  close(): Promise<void>;
}

/** A real backend on a free port that echoes what it received. */
function backend(name: string, handler?: (req: Request) => Response | Promise<Response>): Backend {
  const b: Backend = {
    name,
    dial: "",
    hits: 0,
    healthy: true,
    server: null as unknown as Deno.HttpServer,
    close: () => b.server.shutdown(),
  };
  b.server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req, info) => {
    const url = new URL(req.url);
    if (url.pathname === "/health") {
      return new Response(b.healthy ? "OK" : "down", { status: b.healthy ? 200 : 503 });
    }
    b.hits++;
    if (req.headers.get("upgrade") === "websocket") {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (e) => socket.send(`${name}:${e.data}`);
      return response;
    }
    if (handler) return handler(req);
    const body = req.body ? await req.text() : "";
    return new Response(
      JSON.stringify({
        name,
        method: req.method,
        url: url.pathname + url.search,
        headers: Object.fromEntries(req.headers),
        body,
        remote: info.remoteAddr.hostname,
      }),
      {
        headers: {
          "content-type": "application/json",
          "x-backend": name,
          "connection": "x-hop",
          "x-hop": "should be removed",
          "keep-alive": "timeout=5",
          "set-cookie": "b=1",
        },
      },
    );
  });
  b.dial = `127.0.0.1:${(b.server.addr as Deno.NetAddr).port}`;
  return b;
}

const deadDial = () => `127.0.0.1:${freePort()}`;

Deno.test("reverse_proxy: headers up/down, X-Forwarded-*, hop-by-hop removal, Host kept, bodies both ways", async () => {
  const a = backend("a");
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: a.dial }],
      headers: {
        request: {
          set: { "X-Up": ["{http.reverse_proxy.upstream.hostport}"] },
          delete: ["X-Secret"],
        },
        response: { set: { "X-Down": ["yes"] }, delete: ["X-Backend"] },
      },
    }],
  }]);
  try {
    const r = await raw(srv.url(), "POST", "/p/a?q=1", {
      host: "front.test",
      "x-secret": "s",
      "x-forwarded-for": "6.6.6.6",
      connection: "keep-alive, x-custom-hop",
      "x-custom-hop": "gone",
      te: "trailers, gzip",
      "content-type": "text/plain",
    }, "request body");
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.text);
    assert.equal(seen.method, "POST");
    assert.equal(seen.url, "/p/a?q=1");
    assert.equal(seen.body, "request body");
    assert.equal(seen.headers.host, "front.test");
    assert.equal(seen.headers["x-up"], a.dial);
    assert.equal(seen.headers["x-secret"], undefined);
    assert.equal(seen.headers["x-forwarded-for"], "127.0.0.1", "untrusted client: XFF replaced");
    assert.equal(seen.headers["x-forwarded-proto"], "http");
    assert.equal(seen.headers["x-forwarded-host"], "front.test");
    assert.equal(seen.headers["x-custom-hop"], undefined);
    assert.equal(seen.headers.te, "trailers");
    assert.equal(r.headers.get("x-down"), "yes");
    assert.equal(r.headers.get("x-backend"), null);
    assert.equal(r.headers.get("x-hop"), null);
    assert.equal(r.headers.get("keep-alive"), null);
    assert.equal(r.headers.get("set-cookie"), "b=1");
  } finally {
    await srv.stop();
    await a.close();
  }
});

Deno.test("reverse_proxy without header operations: same forwarding rules, Server header, placeholders", async () => {
  const a = backend("a");
  const named = backend("named", () =>
    new Response("from named", {
      headers: [
        ["server", "upstream/1.0"],
        ["set-cookie", "a=1"],
        ["set-cookie", "b=2"],
        ["connection", "x-drop"],
        ["x-drop", "1"],
      ],
    }));
  const srv = await serve([
    {
      match: [{ path: ["/named"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial: named.dial }] }],
      terminal: true,
    },
    {
      handle: [
        {
          handler: "headers",
          response: {
            set: {
              "X-Status": ["{http.reverse_proxy.status_code}"],
              "X-Upstream": [
                "{http.reverse_proxy.upstream.host}|{http.reverse_proxy.upstream.port}",
              ],
            },
            deferred: true,
          },
        },
        { handler: "reverse_proxy", upstreams: [{ dial: a.dial }] },
      ],
    },
  ]);
  try {
    const r = await raw(srv.url(), "POST", "/p/b?x=2", {
      host: "front.test",
      "x-forwarded-for": "6.6.6.6",
      "x-forwarded-proto": "https",
      connection: "keep-alive, x-custom-hop",
      "x-custom-hop": "gone",
      "proxy-authorization": "Basic Zm9v",
      te: "trailers",
      "x-kept": "yes",
    }, "body bytes");
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.text);
    assert.equal(seen.url, "/p/b?x=2");
    assert.equal(seen.body, "body bytes");
    assert.equal(seen.headers.host, "front.test");
    assert.equal(seen.headers["x-kept"], "yes");
    assert.equal(seen.headers["x-forwarded-for"], "127.0.0.1");
    assert.equal(seen.headers["x-forwarded-proto"], "http");
    assert.equal(seen.headers["x-forwarded-host"], "front.test");
    assert.equal(seen.headers["x-custom-hop"], undefined);
    assert.equal(seen.headers["proxy-authorization"], undefined);
    assert.equal(seen.headers.te, "trailers");
    assert.equal(seen.headers["content-length"], "10");
    assert.equal(r.headers.get("x-hop"), null);
    assert.equal(r.headers.get("keep-alive"), null);
    assert.doesNotMatch(r.head.toLowerCase(), /x-hop/, "nothing the upstream's Connection named");
    // current Caddy: no Server of ours on a proxied answer, a Via instead
    assert.equal(r.headers.get("server"), null);
    assert.equal(r.headers.get("via"), "1.1 Gatehouse");
    assert.equal(r.headers.get("x-status"), "200");
    const [, port] = a.dial.split(":");
    assert.equal(r.headers.get("x-upstream"), `127.0.0.1|${port}`);

    const n = await raw(srv.url(), "GET", "/named");
    assert.equal(n.text, "from named");
    assert.equal(n.headers.get("server"), "upstream/1.0", "the upstream's Server is kept");
    assert.deepEqual(n.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(n.headers.get("x-drop"), null, "a header the upstream's Connection names");
  } finally {
    await srv.stop();
    await a.close();
    await named.close();
  }
});

Deno.test("reverse_proxy: a non-WebSocket Upgrade is forwarded as a plain request; a 101 from the upstream is a clear 502", async () => {
  const a = backend("a");
  // A raw backend that switches protocols whatever it is asked.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      const buf = new Uint8Array(8192);
      const n = await conn.read(buf);
      heads.push(new TextDecoder().decode(buf.subarray(0, n ?? 0)));
      await conn.write(
        new TextEncoder().encode(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\nraw",
        ),
      );
      conn.close();
    }
  })();
  const switching = `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const srv = await serve([
    {
      match: [{ path: ["/switch"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial: switching }] }],
      terminal: true,
    },
    { handle: [{ handler: "reverse_proxy", upstreams: [{ dial: a.dial }] }] },
  ]);
  try {
    const r = await raw(srv.url(), "GET", "/h2c", {
      connection: "Upgrade, HTTP2-Settings",
      upgrade: "h2c",
      "http2-settings": "AAMAAABkAARAAAAAAAIAAAAA",
    });
    assert.equal(r.status, 200, "answered in HTTP/1.1, as a server that does not switch");
    const seen = JSON.parse(r.text);
    assert.equal(seen.headers.upgrade, undefined);
    assert.equal(seen.headers["http2-settings"], undefined);
    assert.equal(seen.headers.connection, undefined);

    const s = await raw(srv.url(), "GET", "/switch", { connection: "Upgrade", upgrade: "foo" });
    assert.equal(s.status, 502);
    assert.equal(heads.length, 1);
    assert.doesNotMatch(heads[0].toLowerCase(), /upgrade: foo/);
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
      num_requests: number;
    }[];
    assert.equal(list.find((u) => u.address === switching)?.num_requests, 0);
  } finally {
    await srv.stop();
    await a.close();
    listener.close();
    await accepting.catch(() => {});
  }
});

Deno.test("reverse_proxy: trusted_proxies keep X-Forwarded-*; streaming response body", async () => {
  const a = backend("a", () => {
    let i = 0;
    return new Response(
      new ReadableStream({
        async pull(c) {
          await new Promise((r) => setTimeout(r, 5));
          if (i++ < 5) c.enqueue(new TextEncoder().encode(`chunk${i};`));
          else c.close();
        },
      }),
    );
  });
  const b = backend("b");
  const srv = await serve([
    {
      match: [{ path: ["/stream"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial: a.dial }], flush_interval: -1 }],
      terminal: true,
    },
    {
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: b.dial }],
        trusted_proxies: ["127.0.0.0/8"],
      }],
    },
  ]);
  try {
    const r = await raw(srv.url(), "GET", "/x", {
      "x-forwarded-for": "9.9.9.9",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "orig.test",
    });
    const seen = JSON.parse(r.text);
    assert.equal(seen.headers["x-forwarded-for"], "9.9.9.9, 127.0.0.1");
    assert.equal(seen.headers["x-forwarded-proto"], "https");
    assert.equal(seen.headers["x-forwarded-host"], "orig.test");
    const res = await fetch(`${srv.url()}/stream`);
    const reader = res.body!.getReader();
    const parts: string[] = [];
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(new TextDecoder().decode(value));
    }
    assert.equal(parts.join(""), "chunk1;chunk2;chunk3;chunk4;chunk5;");
    assert.ok(parts.length > 1, "streamed in several chunks");
  } finally {
    await srv.stop();
    await a.close();
    await b.close();
  }
});

Deno.test("reverse_proxy: selection policies", async () => {
  const bs = [backend("a"), backend("b"), backend("c")];
  const ups = bs.map((b) => ({ dial: b.dial }));
  const rp = (
    policy: Record<string, unknown>,
  ) => [{ handler: "reverse_proxy", upstreams: ups, load_balancing: { selection_policy: policy } }];
  const srv = await serve([
    { match: [{ path: ["/rr"] }], handle: rp({ policy: "round_robin" }), terminal: true },
    { match: [{ path: ["/first"] }], handle: rp({ policy: "first" }), terminal: true },
    {
      match: [{ path: ["/wrr"] }],
      handle: rp({ policy: "weighted_round_robin", weights: [3, 1, 0] }),
      terminal: true,
    },
    { match: [{ path: ["/uri/*"] }], handle: rp({ policy: "uri_hash" }), terminal: true },
    {
      match: [{ path: ["/hdr"] }],
      handle: rp({ policy: "header", field: "X-User" }),
      terminal: true,
    },
    { match: [{ path: ["/query"] }], handle: rp({ policy: "query", key: "u" }), terminal: true },
    { match: [{ path: ["/ip"] }], handle: rp({ policy: "ip_hash" }), terminal: true },
    { match: [{ path: ["/cip"] }], handle: rp({ policy: "client_ip_hash" }), terminal: true },
    {
      match: [{ path: ["/cookie"] }],
      handle: rp({ policy: "cookie", name: "srv", secret: "k" }),
      terminal: true,
    },
    { match: [{ path: ["/random"] }], handle: rp({ policy: "random" }), terminal: true },
    { match: [{ path: ["/least"] }], handle: rp({ policy: "least_conn" }), terminal: true },
    {
      match: [{ path: ["/choose"] }],
      handle: rp({ policy: "random_choose", choose: 2 }),
      terminal: true,
    },
  ]);
  const who = async (path: string, headers: Record<string, string> = {}) => {
    const r = await raw(srv.url(), "GET", path, headers);
    return {
      name: r.headers.get("x-backend")!,
      cookie: r.headers.getSetCookie().find((c) => c.startsWith("srv=")) ?? null,
    };
  };
  try {
    const rr = [];
    for (let i = 0; i < 6; i++) rr.push((await who("/rr")).name);
    assert.deepEqual(rr.slice(0, 3).sort(), ["a", "b", "c"]);
    assert.deepEqual(rr.slice(3), rr.slice(0, 3));
    for (let i = 0; i < 3; i++) assert.equal((await who("/first")).name, "a");
    const w = [];
    for (let i = 0; i < 8; i++) w.push((await who("/wrr")).name);
    assert.equal(w.filter((n) => n === "a").length, 6);
    assert.equal(w.filter((n) => n === "b").length, 2);
    for (
      const [path, h] of [["/uri/x1", {}], ["/hdr", { "x-user": "alice" }], ["/query?u=bob", {}], [
        "/ip",
        {},
      ], ["/cip", {}]] as const
    ) {
      const first = (await who(path, h)).name;
      for (let i = 0; i < 4; i++) {
        assert.equal((await who(path, h)).name, first, `${path} is sticky`);
      }
    }
    const c1 = await who("/cookie");
    assert.match(c1.cookie!, /^srv=[0-9a-f]{64}; Path=\//);
    const value = c1.cookie!.split(";")[0];
    for (let i = 0; i < 4; i++) {
      const again = await who("/cookie", { cookie: value });
      assert.equal(again.name, c1.name);
      assert.equal(again.cookie, null);
    }
    for (const p of ["/random", "/least", "/choose"]) {
      assert.ok(["a", "b", "c"].includes((await who(p)).name));
    }
  } finally {
    await srv.stop();
    for (const b of bs) await b.close();
  }
});

Deno.test("reverse_proxy: failover with retries, passive health checks and the admin upstreams list", async () => {
  const good = backend("good");
  const dead = deadDial();
  const srv = await serve([
    {
      match: [{ path: ["/noretry"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial: dead }] }],
      terminal: true,
    },
    {
      match: [{ path: ["/flaky"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: good.dial }],
        health_checks: { passive: { fail_duration: "2s", max_fails: 2, unhealthy_status: [500] } },
      }],
      terminal: true,
    },
    {
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: dead }, { dial: good.dial }],
        load_balancing: {
          selection_policy: { policy: "first" },
          try_duration: "2s",
          try_interval: "10ms",
        },
        health_checks: { passive: { fail_duration: "30s", max_fails: 1 } },
      }],
    },
  ]);
  try {
    let r = await raw(srv.url(), "GET", "/noretry");
    assert.equal(r.status, 502, "dial failure without retries");
    r = await raw(srv.url(), "GET", "/x");
    assert.equal(r.status, 200, "retried on the next upstream");
    assert.equal(r.headers.get("x-backend"), "good");
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
      fails: number;
      num_requests: number;
    }[];
    const deadRec = list.find((u) => u.address === dead)!;
    assert.ok(deadRec.fails >= 1, "failed dial remembered");
    assert.equal(list.find((u) => u.address === good.dial)!.num_requests, 0);
    const hitsBefore = good.hits;
    r = await raw(srv.url(), "GET", "/y");
    assert.equal(r.status, 200);
    assert.equal(good.hits, hitsBefore + 1, "dead upstream skipped while its fail is remembered");
  } finally {
    await srv.stop();
    await good.close();
  }
});

Deno.test("reverse_proxy: passive unhealthy_status marks the host down; 503 when none available", async () => {
  let status = 500;
  const flaky = backend("flaky", () => new Response("x", { status }));
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: flaky.dial }],
      health_checks: { passive: { fail_duration: "2s", max_fails: 2, unhealthy_status: [5] } },
    }],
  }]);
  try {
    assert.equal((await raw(srv.url(), "GET", "/")).status, 500);
    assert.equal((await raw(srv.url(), "GET", "/")).status, 500);
    status = 200;
    assert.equal(
      (await raw(srv.url(), "GET", "/")).status,
      503,
      "two 5xx within fail_duration: unavailable",
    );
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
      fails: number;
    }[];
    assert.equal(list.find((u) => u.address === flaky.dial)!.fails, 2);
  } finally {
    await srv.stop();
    await flaky.close();
  }
});

Deno.test("reverse_proxy: unhealthy_request_count and max_requests cap concurrent requests; num_requests is live", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const slow = backend("slow", async () => {
    await gate;
    return new Response("done");
  });
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: slow.dial, max_requests: 1 }],
      health_checks: { passive: { unhealthy_request_count: 5 } },
    }],
  }]);
  try {
    const first = raw(srv.url(), "GET", "/");
    await new Promise((r) => setTimeout(r, 100));
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
      num_requests: number;
    }[];
    assert.equal(list.find((u) => u.address === slow.dial)!.num_requests, 1);
    assert.equal((await raw(srv.url(), "GET", "/")).status, 503, "max_requests reached");
    release();
    assert.equal((await first).text, "done");
  } finally {
    await srv.stop();
    await slow.close();
  }
});

Deno.test("reverse_proxy: active health checks take upstreams out and back", async () => {
  const a = backend("a");
  const b = backend("b");
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: a.dial }, { dial: b.dial }],
      load_balancing: { selection_policy: { policy: "first" } },
      health_checks: {
        active: {
          uri: "/health",
          interval: "100ms",
          timeout: "1s",
          expect_status: 200,
          expect_body: "OK",
        },
      },
    }],
  }]);
  try {
    assert.equal((await raw(srv.url(), "GET", "/")).headers.get("x-backend"), "a");
    a.healthy = false;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await raw(srv.url(), "GET", "/")).headers.get("x-backend"), "b");
    a.healthy = true;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await raw(srv.url(), "GET", "/")).headers.get("x-backend"), "a");
    b.healthy = false;
    a.healthy = false;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await raw(srv.url(), "GET", "/")).status, 503);
  } finally {
    await srv.stop();
    await a.close();
    await b.close();
  }
});

Deno.test("reverse_proxy: WebSocket proxying", async () => {
  const a = backend("ws");
  const srv = await serve([{
    handle: [{ handler: "reverse_proxy", upstreams: [{ dial: a.dial }] }],
  }]);
  try {
    const ws = new WebSocket(srv.url().replace("http", "ws") + "/socket");
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => {
        ws.send("hello");
        ws.send("again");
      };
      ws.onmessage = (e) => {
        got.push(String(e.data));
        if (got.length === 2) ws.close();
      };
      ws.onclose = () => resolve();
      ws.onerror = () => reject(new Error("websocket error"));
    });
    assert.deepEqual(got, ["ws:hello", "ws:again"]);
  } finally {
    await srv.stop();
    await a.close();
  }
});

Deno.test("reverse_proxy: a WebSocket client that closes with 1001 or drops the connection leaves the server serving, the upstream closed", async () => {
  const closes: number[] = [];
  const up = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.headers.get("upgrade") !== "websocket") return new Response("plain");
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => socket.send(`echo:${e.data}`);
    socket.onclose = (e) => closes.push(e.code);
    return response;
  });
  const srv = await serve([{
    handle: [{ handler: "reverse_proxy", upstreams: [{ dial: `127.0.0.1:${up.addr.port}` }] }],
  }]);
  const enc = new TextEncoder();
  const port = Number(new URL(srv.url()).port);
  /** A raw WebSocket client: handshake, one echoed message, then `end`. */
  const session = async (end: (c: Deno.Conn) => Promise<void>) => {
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    await c.write(enc.encode(
      "GET /s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    ));
    let text = "";
    const buf = new Uint8Array(4096);
    while (!text.includes("echo:hi")) {
      if (text.includes("\r\n\r\n") && !text.includes("sent")) {
        const mask = [1, 2, 3, 4];
        const payload = [..."hi"].map((ch, i) => ch.charCodeAt(0) ^ mask[i]);
        await c.write(new Uint8Array([0x81, 0x82, ...mask, ...payload]));
        text += "sent";
      }
      const n = await c.read(buf);
      if (n === null) throw new Error(`closed early: ${text}`);
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    await end(c);
  };
  try {
    // a close frame with 1001 (what a browser sends leaving a page), masked
    await session(async (c) => {
      const mask = [9, 8, 7, 6];
      const body = [0x03, 0xe9].map((b, i) => b ^ mask[i]);
      await c.write(new Uint8Array([0x88, 0x82, ...mask, ...body]));
      const buf = new Uint8Array(64);
      while ((await c.read(buf)) !== null) { /* the server's close frame, then EOF */ }
      c.close();
    });
    // the connection dropped without a close frame
    await session((c) => Promise.resolve(c.close()));
    for (let i = 0; i < 100 && closes.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(closes.length, 2, "the upstream side of both was closed");
    const r = await fetch(srv.url() + "/after");
    assert.equal(await r.text(), "plain", "the server still answers");
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});

Deno.test("reverse_proxy: upstream pool survives a reload without dropping", async () => {
  const a = backend("a");
  const srv = await startHttp({
    servers: {
      s: {
        listen: ["127.0.0.1:0"],
        routes: [{ handle: [{ handler: "reverse_proxy", upstreams: [{ dial: a.dial }] }] }],
      },
    },
  });
  try {
    assert.equal((await raw(srv.url(), "GET", "/")).status, 200);
    await srv.reload({
      servers: {
        s: {
          listen: ["127.0.0.1:0"],
          routes: [{
            handle: [{
              handler: "reverse_proxy",
              upstreams: [{ dial: a.dial }],
              headers: { response: { set: { "X-Gen": ["2"] } } },
            }],
          }],
        },
      },
    });
    const r = await raw(srv.url(), "GET", "/");
    assert.equal(r.headers.get("x-gen"), "2");
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
    }[];
    assert.deepEqual(list.map((u) => u.address), [a.dial]);
  } finally {
    await srv.stop();
    await a.close();
  }
});

Deno.test("reverse_proxy: retries count, retry_match for non-dial failures, unhealthy_latency, response_header_timeout 504", async () => {
  let calls = 0;
  const flaky = backend("flaky", () => {
    calls++;
    return new Response("ok");
  });
  const slow = backend("slow", async () => {
    await new Promise((r) => setTimeout(r, 300));
    return new Response("late");
  });
  const dead = deadDial();
  const srv = await serve([
    {
      match: [{ path: ["/retries"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: dead }, { dial: flaky.dial }],
        load_balancing: {
          selection_policy: { policy: "round_robin" },
          retries: 2,
          try_interval: "5ms",
        },
      }],
      terminal: true,
    },
    {
      match: [{ path: ["/timeout"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: slow.dial }],
        transport: { protocol: "http", response_header_timeout: "50ms" },
      }],
      terminal: true,
    },
    {
      match: [{ path: ["/latency"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: slow.dial }],
        health_checks: {
          passive: { fail_duration: "5s", max_fails: 1, unhealthy_latency: "100ms" },
        },
      }],
      terminal: true,
    },
    {
      match: [{ path: ["/retry-match"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: slow.dial }, { dial: flaky.dial }],
        transport: { protocol: "http", response_header_timeout: "50ms" },
        load_balancing: {
          selection_policy: { policy: "first" },
          try_duration: "2s",
          try_interval: "5ms",
          retry_match: [{ method: ["GET"] }],
        },
        health_checks: { passive: { fail_duration: "5s", max_fails: 1 } },
      }],
      terminal: true,
    },
  ]);
  try {
    for (let i = 0; i < 4; i++) {
      const r = await raw(srv.url(), "GET", "/retries");
      assert.equal(r.status, 200, "a dial failure is retried on the next upstream");
    }
    assert.equal(calls, 4);
    const t = await raw(srv.url(), "GET", "/timeout");
    assert.equal(t.status, 504);
    assert.equal((await raw(srv.url(), "GET", "/latency")).text, "late");
    assert.equal(
      (await raw(srv.url(), "GET", "/latency")).status,
      503,
      "slow upstream marked down",
    );
    const rm = await raw(srv.url(), "GET", "/retry-match");
    assert.equal(rm.text, "ok", "a GET matched by retry_match is retried after a timeout");
    const post = await raw(srv.url(), "POST", "/retries", {}, "body");
    assert.ok([200, 502].includes(post.status));
  } finally {
    await srv.stop();
    await flaky.close();
    await slow.close();
  }
});
