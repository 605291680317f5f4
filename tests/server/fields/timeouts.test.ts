/**
 * Server timeouts and the request head limit on a running `gatehouse` process, through raw
 * sockets: `read_header_timeout`, `read_timeout`, `write_timeout`, `idle_timeout`,
 * `max_header_bytes`, each next to a server without the field that keeps doing what it did.
 */
import assert from "node:assert/strict";
import { oneResponse, RawConn, runServer } from "./_server.ts";

const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  const url = new URL(req.url);
  if (url.pathname === "/slow") await new Promise((r) => setTimeout(r, 1500));
  const body = req.body ? await req.text().catch(() => "") : "";
  return new Response(`echo ${url.pathname} ${body}`);
});
const up = `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}`;
const proxy = [{ handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up }] }] }];
const wsUpstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  if (req.headers.get("upgrade") !== "websocket") return new Response("plain");
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.onmessage = (e) => socket.send(`echo:${e.data}`);
  return response;
});
const wsProxy = [{
  handle: [{
    handler: "reverse_proxy",
    upstreams: [{ dial: `127.0.0.1:${(wsUpstream.addr as Deno.NetAddr).port}` }],
  }],
}];
const ok = [{ handle: [{ handler: "static_response", body: "ok" }] }];

const srv = await runServer({
  servers: {
    header: { listen: ["127.0.0.1:0"], read_header_timeout: "400ms", routes: ok },
    header_node: {
      listen: ["127.0.0.1:0"],
      read_header_timeout: "400ms",
      listener_engine: "node",
      routes: ok,
    },
    body: { listen: ["127.0.0.1:0"], read_timeout: "600ms", routes: proxy },
    write: { listen: ["127.0.0.1:0"], write_timeout: "300ms", routes: proxy },
    idle: { listen: ["127.0.0.1:0"], idle_timeout: "400ms", routes: ok },
    head: { listen: ["127.0.0.1:0"], max_header_bytes: 1024, routes: ok },
    plain: { listen: ["127.0.0.1:0"], routes: proxy },
    ws: {
      listen: ["127.0.0.1:0"],
      read_header_timeout: "300ms",
      idle_timeout: "300ms",
      routes: wsProxy,
    },
  },
});
const port = (name: string) => srv.ports(name)[0];
const GET = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: a${extra}\r\n\r\n`;

Deno.test({
  name: "fields: read_header_timeout closes a stalled head (unanswered as Caddy, or 408 on node)",
  sanitizeResources: false,
  async fn() {
    // the default engine (deno) closes it without an answer, as Go's server does
    const c = await RawConn.open(port("header"));
    await c.send("GET / HTTP/1.1\r\nHost: a\r\n");
    const r = await c.until(() => false);
    assert.ok(r.closed, "the stalled connection is closed");
    assert.equal(r.text, "");
    await c.close();
    // the node engine answers 408 first
    const n = await RawConn.open(port("header_node"));
    await n.send("GET / HTTP/1.1\r\nHost: a\r\n");
    const rn = await n.until(() => false);
    assert.ok(rn.closed, "the stalled connection is closed (node engine)");
    assert.match(rn.text, /^HTTP\/1\.1 408 /);
    await n.close();

    // a kept-alive connection idle for longer than the limit still serves its next request
    const k = await RawConn.open(port("header"));
    await k.send(GET("/1"));
    assert.match((await k.until(oneResponse)).text, /^HTTP\/1\.1 200 /);
    k.take();
    await new Promise((r) => setTimeout(r, 900));
    await k.send(GET("/2"));
    const second = await k.until(oneResponse);
    assert.equal(second.closed, false);
    assert.match(second.text, /^HTTP\/1\.1 200 /);
    await k.close();
  },
});

Deno.test({
  name: "fields: read_timeout cuts a request whose body stops arriving; a whole one is served",
  sanitizeResources: false,
  async fn() {
    const c = await RawConn.open(port("body"));
    await c.send("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
    const r = await c.until(() => false);
    assert.ok(r.closed);
    assert.ok(r.text === "" || /^HTTP\/1\.1 408 /.test(r.text), r.text);
    await c.close();

    const w = await RawConn.open(port("body"));
    await w.send("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabcdefghij");
    const whole = await w.until(oneResponse);
    assert.match(whole.text, /^HTTP\/1\.1 200 [^]*echo \/up abcdefghij$/);
    await w.close();

    // without the field, the same stalled body is still waited for
    const p = await RawConn.open(port("plain"));
    await p.send("POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc");
    const waiting = await p.until(() => false, 1500);
    assert.equal(waiting.closed, false);
    assert.equal(waiting.text, "");
    await p.send("defghij");
    assert.match((await p.until(oneResponse)).text, /echo \/up abcdefghij$/);
    await p.close();
  },
});

Deno.test({
  name: "fields: write_timeout closes a connection whose response is not done in time",
  sanitizeResources: false,
  async fn() {
    const c = await RawConn.open(port("write"));
    await c.send(GET("/slow"));
    const r = await c.until(() => false);
    assert.ok(r.closed);
    assert.equal(r.text, "", "nothing of the late response was sent");
    await c.close();
    // a quick response is within the limit
    const q = await RawConn.open(port("write"));
    await q.send(GET("/quick"));
    assert.match((await q.until(oneResponse)).text, /^HTTP\/1\.1 200 [^]*echo \/quick $/);
    await q.close();
    // and without the field the slow one arrives
    const p = await RawConn.open(port("plain"));
    await p.send(GET("/slow"));
    assert.match((await p.until(oneResponse)).text, /^HTTP\/1\.1 200 [^]*echo \/slow $/);
    await p.close();
  },
});

Deno.test({
  name: "fields: idle_timeout closes a kept-alive connection that sends nothing more",
  sanitizeResources: false,
  async fn() {
    const c = await RawConn.open(port("idle"));
    await c.send(GET("/a"));
    const first = await c.until(oneResponse);
    assert.match(first.text, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(first.text, /\r\nkeep-alive:/i, "no Keep-Alive header (as Go)");
    // the next request within the idle time is served on the same connection
    c.take();
    await c.send(GET("/b"));
    assert.match((await c.until(oneResponse)).text, /^HTTP\/1\.1 200 /);
    c.take();
    const idle = await c.until(() => false);
    assert.ok(idle.closed, "closed after the idle time");
    assert.equal(idle.text, "");
    await c.close();

    const p = await RawConn.open(port("plain"));
    await p.send(GET("/a"));
    await p.until(oneResponse);
    p.take();
    const open = await p.until(() => false, 1500);
    assert.equal(open.closed, false, "without idle_timeout the connection stays");
    await p.close();
  },
});

Deno.test({
  name: "fields: max_header_bytes answers 431 to a longer request head",
  sanitizeResources: false,
  async fn() {
    const big = await RawConn.open(port("head"));
    await big.send(GET("/", `\r\nX-Big: ${"b".repeat(2000)}`));
    const r = await big.until(oneResponse);
    assert.match(r.text, /^HTTP\/1\.1 431 /);
    await big.close();
    const small = await RawConn.open(port("head"));
    await small.send(GET("/", `\r\nX-Small: ${"s".repeat(500)}`));
    assert.match((await small.until(oneResponse)).text, /^HTTP\/1\.1 200 [^]*ok$/);
    await small.close();
    // without the field, 2000 bytes of header are fine
    const p = await RawConn.open(port("plain"));
    await p.send(GET("/h", `\r\nX-Big: ${"b".repeat(2000)}`));
    assert.match((await p.until(oneResponse)).text, /^HTTP\/1\.1 200 /);
    await p.close();
  },
});

Deno.test({
  name:
    "fields: on a proxying server with timeouts (deno engine) a stalled head and an idle connection are closed, a WebSocket lives on past them",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // the limits hold on the connections the server relays for upgrades: closed unanswered
    const c = await RawConn.open(port("ws"));
    await c.send("GET / HTTP/1.1\r\nHost: a\r\n");
    const r = await c.until(() => false);
    assert.ok(r.closed, "the stalled connection is closed");
    assert.equal(r.text, "", "closed without an answer (the deno engine, not node's 408)");
    await c.close();
    const k = await RawConn.open(port("ws"));
    await k.send(GET("/1"));
    assert.match((await k.until(oneResponse)).text, /^HTTP\/1\.1 200 /);
    const idle = await k.until(() => false);
    assert.ok(idle.closed, "the idle kept-alive connection is closed");
    await k.close();
    // a WebSocket is out of every limit once upgraded
    const ws = new WebSocket(`ws://127.0.0.1:${port("ws")}/socket`);
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.onopen = async () => {
        ws.send("before");
        await new Promise((t) => setTimeout(t, 1000)); // past both limits
        ws.send("after");
      };
      ws.onmessage = (e) => {
        got.push(String(e.data));
        if (got.length === 2) ws.close();
      };
      ws.onclose = () => resolve();
      ws.onerror = () => reject(new Error("websocket error"));
    });
    assert.deepEqual(got, ["echo:before", "echo:after"]);
  },
});

Deno.test({
  name: "fields: stop the server and the upstream",
  sanitizeResources: false,
  async fn() {
    await srv.stop();
    await upstream.shutdown();
    await wsUpstream.shutdown();
  },
});
