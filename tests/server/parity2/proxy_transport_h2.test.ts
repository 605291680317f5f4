/**
 * The `http` transport's fields on its HTTP/2 paths (`versions` `h2c` and `2`), as Go's
 * transport applies them under Caddy, against Node's HTTP/2 server (h2_upstream.mjs) on
 * loopback: `expect_continue_timeout` (the body waits for the upstream's 100 Continue, or the
 * time; an error answer first means no body), `max_conns_per_host` (more connections when
 * streams run out, never more than that), `keep_alive` (`enabled: false` one connection per
 * request; `idle_timeout`; `probe_interval`), `max_response_header_size`, `resolver`,
 * `dial_fallback_delay`, `tls.except_ports` (h2c to those ports, h2 over TLS to the others);
 * `read_buffer_size` and `write_buffer_size` are taken and, as in Go's HTTP/2 client, change
 * nothing there.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import { startHttp } from "../http/harness.ts";
import { makePki } from "../http/pki.ts";
import { startDns } from "../fields/_dns.ts";
import { readKeepAlive } from "../../../lib/server/listeners/keepalive.ts";
import { exchange, nodeH2 } from "./_h2.ts";

const proxy = (dial: string | string[], transport: Record<string, unknown>, extra = {}) => ({
  handle: [{
    handler: "reverse_proxy",
    upstreams: (Array.isArray(dial) ? dial : [dial]).map((d) => ({ dial: d })),
    transport: { protocol: "http", ...transport },
    ...extra,
  }],
});

Deno.test("HTTP/2 transport: expect_continue_timeout holds the body for 100 Continue (h2c and h2)", async () => {
  const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const h2c = await nodeH2();
  const h2 = await nodeH2({ tls: pki.leafs.up });
  const ca = {
    provider: "inline",
    trusted_ca_certs: [pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "")],
  };
  const tls = { versions: ["2"], tls: { ca, server_name: "localhost" } };
  const srv = await startHttp({
    servers: {
      wait: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(h2c.dial, { versions: ["h2c"], expect_continue_timeout: "60s" })],
      },
      nowait: { listen: ["127.0.0.1:0"], routes: [proxy(h2c.dial, { versions: ["h2c"] })] },
      short: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(h2c.dial, { versions: ["h2c"], expect_continue_timeout: "200ms" })],
      },
      tlswait: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(h2.dial, { ...tls, expect_continue_timeout: "60s" })],
      },
    },
  });
  const post = (server: string, path: string) =>
    exchange(srv.url(server), "POST", path, { expect: "100-continue" }, "hello");
  try {
    // the body goes after the upstream's 100 Continue (sent 300 ms after the headers)
    for (const name of ["wait", "tlswait"]) {
      const r = await post(name, "/continue");
      assert.equal(r.status, 200, name);
      assert.equal(r.headers.get("x-order"), "headers,100,data", name);
      assert.match(r.body, /body=hello$/);
    }
    // without the field the body goes at once (and the upstream answers before its 100)
    const at = await post("nowait", "/continue");
    assert.equal(at.headers.get("x-order"), "headers,data");
    // no 100 Continue ever: the body goes when the time is up
    const late = await post("short", "/plain");
    assert.equal(late.status, 200);
    assert.equal(late.headers.get("x-order"), "headers,data");
    assert.match(late.body, /body=hello$/);
    // an error answer before 100 Continue: the body is never sent
    const before = h2c.of("stream").length;
    const no = await post("wait", "/reject");
    assert.equal(no.status, 417);
    assert.equal(no.body, "expectation failed");
    await h2c.until((e) => e.some((x) => x.ev === "stream-close" && x.path === "/reject"), "close");
    const rejected = h2c.of("stream").slice(before).find((s) => s.path === "/reject")!;
    assert.equal(rejected.expect, "100-continue", "Expect goes upstream");
    assert.deepEqual(h2c.events.filter((e) => e.ev === "data" && e.id === rejected.id), []);
    assert.equal(
      h2c.events.find((e) => e.ev === "stream-close" && e.id === rejected.id)?.received,
      0,
    );
  } finally {
    await srv.stop();
    await h2c.stop();
    await h2.stop();
  }
});

Deno.test("HTTP/2 transport: max_conns_per_host, keep_alive and max_response_header_size", async () => {
  // one stream per connection: concurrent requests need more connections
  const up = await nodeH2({ maxStreams: 1 });
  const h2c = { versions: ["h2c"] };
  const srv = await startHttp({
    servers: {
      capped: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { ...h2c, max_conns_per_host: 2 })],
      },
      free: { listen: ["127.0.0.1:0"], routes: [proxy(up.dial, h2c)] },
      single: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { ...h2c, keep_alive: { enabled: false } })],
      },
      idle: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { ...h2c, keep_alive: { idle_timeout: "200ms" } })],
      },
      small: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { ...h2c, max_response_header_size: 1024 })],
      },
      buffers: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { ...h2c, read_buffer_size: 100, write_buffer_size: 100 })],
      },
    },
  });
  const sessions = () => up.of("session").length;
  const get = async (server: string, path = "/") => {
    const r = await fetch(`${srv.url(server)}${path}`);
    return { status: r.status, body: await r.text() };
  };
  try {
    // six at once, one stream per connection: two connections carry them all
    let before = sessions();
    let answers = await Promise.all(Array.from({ length: 6 }, () => get("capped", "/slow")));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    assert.equal(sessions() - before, 2, "max_conns_per_host: 2");
    assert.equal(new Set(answers.map((a) => /session=(\d+)/.exec(a.body)![1])).size, 2);
    // without the cap, a connection for each (Go opens one when the others are full)
    before = sessions();
    answers = await Promise.all(Array.from({ length: 6 }, () => get("free", "/slow")));
    assert.equal(sessions() - before, 6);

    // keep_alive.enabled false: a connection per request, closed after it
    before = sessions();
    const closedBefore = up.of("session-close").length;
    for (let i = 0; i < 3; i++) assert.equal((await get("single")).status, 200);
    assert.equal(sessions() - before, 3);
    await up.until(
      (e) => e.filter((x) => x.ev === "session-close").length >= closedBefore + 3,
      "closes",
    );
    // kept alive (the default): one connection for requests one after the other
    before = sessions();
    for (let i = 0; i < 3; i++) await get("capped");
    assert.equal(sessions() - before, 0, "the capped server's connections are reused");

    // idle_timeout: the idle connection closes, and the next request opens another
    const first = await get("idle");
    const id = Number(/session=(\d+)/.exec(first.body)![1]);
    await up.until((e) => e.some((x) => x.ev === "session-close" && x.id === id), "idle close");
    const second = await get("idle");
    assert.notEqual(Number(/session=(\d+)/.exec(second.body)![1]), id);

    // the response head limit is announced and enforced
    assert.equal((await get("small", "/bighead?n=2000")).status, 502);
    assert.equal((await get("small", "/bighead?n=300")).status, 200);
    assert.equal((await get("free", "/bighead?n=2000")).status, 200);

    // buffer sizes change nothing on HTTP/2 (Go's HTTP/2 client does not take them)
    const big = "x".repeat(5000);
    const r = await fetch(srv.url("buffers"), { method: "POST", body: big });
    assert.equal(r.status, 200);
    assert.match(await r.text(), new RegExp(`body=${big}$`));
  } finally {
    await srv.stop();
    await up.stop();
  }
});

Deno.test("HTTP/2 transport: resolver, dial_fallback_delay, probe_interval and tls.except_ports", async () => {
  const pki = await makePki({ up: { dns: ["localhost", "h2.test"], ip: ["127.0.0.1"] } });
  const plain = await nodeH2();
  const secure = await nodeH2({ tls: pki.leafs.up });
  // an h2c server on ::1 only: "dual.test" has nothing on this port at its IPv4 address
  const v6 = http2.createServer((_req, res) => res.end("v6"));
  await new Promise<void>((r) => v6.listen(0, "::1", () => r()));
  const v6port = (v6.address() as { port: number }).port;
  const dns = await startDns({
    "h2.test": { a: ["127.0.0.1"] },
    "dual.test": { a: ["127.0.0.1"], aaaa: ["::1"] },
  });
  const resolver = { addresses: [`127.0.0.1:${dns.port}`] };
  const ca = {
    provider: "inline",
    trusted_ca_certs: [pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "")],
  };
  const rr = { load_balancing: { selection_policy: { policy: "round_robin" } } };
  const both = [secure.dial, plain.dial];
  const srv = await startHttp({
    servers: {
      named: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(`h2.test:${plain.port}`, { versions: ["h2c"], resolver })],
      },
      dual: {
        listen: ["127.0.0.1:0"],
        routes: [
          proxy(`dual.test:${v6port}`, {
            versions: ["h2c"],
            resolver,
            dial_fallback_delay: "5s",
          }),
        ],
      },
      probe: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(plain.dial, { versions: ["h2c"], keep_alive: { probe_interval: "7s" } })],
      },
      except: {
        listen: ["127.0.0.1:0"],
        routes: [
          proxy(both, {
            versions: ["h2c", "2"],
            tls: { ca, server_name: "localhost", except_ports: [String(plain.port)] },
          }, rr),
        ],
      },
      all_tls: {
        listen: ["127.0.0.1:0"],
        routes: [
          proxy(both, { versions: ["h2c", "2"], tls: { ca, server_name: "localhost" } }, rr),
        ],
      },
    },
  });
  try {
    const named = await fetch(srv.url("named"));
    assert.equal(named.status, 200);
    assert.match(await named.text(), /^session=\d+ stream=\d+/);
    assert.ok(dns.asked.includes("h2.test A"), "the name was asked of the resolver");
    // the IPv4 attempt is refused: the IPv6 one starts at once, not after the 5 s delay
    const dual = await fetch(srv.url("dual"));
    assert.equal(await dual.text(), "v6");

    const before = plain.of("session").length;
    assert.equal(
      (await fetch(srv.url("probe")).then((r) => r.text())).startsWith("session="),
      true,
    );
    const session = plain.of("session")[before];
    const ka = readKeepAlive(session.peer!, plain.port);
    assert.equal(ka?.enabled, true, "TCP keep-alive on the HTTP/2 connection");
    assert.equal(ka?.idleS, 7);

    // h2 over TLS to one port, h2c to the excepted one: both answer over HTTP/2
    const bodies = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(srv.url("except"));
      assert.equal(r.status, 200);
      bodies.push(await r.text());
    }
    assert.ok(bodies.every((b) => /^session=\d+ stream=\d+/.test(b)), bodies.join(" | "));
    assert.ok(secure.of("stream").length >= 1 && plain.of("stream").length >= 3);
    const statuses = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(srv.url("all_tls"));
      statuses.push(r.status);
      await r.body?.cancel();
    }
    assert.deepEqual(statuses.sort(), [200, 502], "TLS to the plain port fails");
  } finally {
    await srv.stop();
    await plain.stop();
    await secure.stop();
    await new Promise((r) => v6.close(r));
    await dns.close();
  }
});
