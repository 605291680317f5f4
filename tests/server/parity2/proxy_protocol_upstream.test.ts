/**
 * `transport http { proxy_protocol v1|v2 }`: each upstream connection starts with a PROXY
 * header naming the client. Caddy 2.6.2 has no such field (it refuses it as an unknown field);
 * the behaviour is current Caddy's (`modules/caddyhttp/reverseproxy/httptransport.go`, since
 * v2.7.0: the header written right after the dial, before TLS; the destination the zero
 * address of the source's family, port 0; connections kept apart per client address, as
 * `reverseproxy.go` keys them by `<client>-><upstream>` since #7300, 8aca108d2, v2.11.0),
 * byte for byte where Caddy's go-proxyproto output is fixed (the source port aside: Caddy
 * keeps the client IP only and sends port 0; the port of the client's connection goes here).
 *
 * The upstream that reads the headers is our own server with the `proxy_protocol` listener
 * wrapper (answering the address it took from the header), over HTTP/1.1, h2c and TLS (h2 and
 * HTTP/1.1); a raw upstream shows the bytes and how connections are shared. The writer is
 * fuzzed against the wrapper's parser both ways.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";
import { makePki } from "../http/pki.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import {
  encodeProxyV1,
  encodeProxyV2,
  parseProxyHeader,
} from "../../../lib/server/listeners/wrappers/proxy_header.ts";
import {
  headerIP,
  proxyProtocolHeader,
  proxyProtocolLocal,
} from "../../../lib/server/http/handlers/reverse_proxy/proxy_protocol.ts";
import { parseIP } from "../../../lib/server/net/ip.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });

/** One HTTP/1.1 request on a fresh connection (an optional PROXY header first); the answer. */
async function ask(
  port: number,
  path: string,
  before?: Uint8Array,
): Promise<{ status: number; headers: string; body: string; localPort: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const localPort = (conn.localAddr as Deno.NetAddr).port;
  if (before) await conn.write(before);
  await conn.write(
    enc.encode(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`),
  );
  let text = "";
  const buf = new Uint8Array(16384);
  for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
    text += dec.decode(buf.subarray(0, n));
  }
  conn.close();
  const end = text.indexOf("\r\n\r\n");
  return {
    status: Number(text.split(" ")[1]),
    headers: text.slice(0, end),
    body: text.slice(end + 4),
    localPort,
  };
}

/**
 * Gatehouse with an upstream server (the proxy_protocol wrapper, USE for loopback; plain with
 * h1 and h2c, and TLS) and a front server proxying to it with each version and protocol.
 */
async function start() {
  const up = freePort(), upTls = freePort();
  const front = freePort(), frontPP = freePort();
  const echo = [{
    handle: [{
      handler: "static_response",
      body: "{http.request.remote.host} {http.request.remote.port}",
    }],
  }];
  const wrapper = { wrapper: "proxy_protocol", allow: ["127.0.0.0/8"] };
  const tls = { protocol: "http", tls: { ca: { provider: "inline", trusted_ca_certs: [der] } } };
  const proxy = (path: string, port: number, transport: Record<string, unknown>) => ({
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${port}` }],
      transport: { protocol: "http", ...transport },
    }],
    terminal: true,
  });
  const frontRoutes = [
    proxy("/v1", up, { proxy_protocol: "v1" }),
    proxy("/v2", up, { proxy_protocol: "v2" }),
    proxy("/h2c", up, { proxy_protocol: "v2", versions: ["h2c"] }),
    proxy("/tls", upTls, {
      ...tls,
      proxy_protocol: "v1",
      tls: { ...tls.tls, server_name: "localhost" },
    }),
    proxy("/h2", upTls, {
      ...tls,
      proxy_protocol: "v2",
      versions: ["2"],
      tls: { ...tls.tls, server_name: "localhost" },
    }),
  ];
  const server = await startServer({
    config: {
      admin: { disabled: true },
      apps: {
        tls: {
          certificates: { load_pem: [{ certificate: pki.leafs.up.cert, key: pki.leafs.up.key }] },
        },
        http: {
          servers: {
            up: {
              listen: [`127.0.0.1:${up}`],
              listener_wrappers: [wrapper],
              protocols: ["h1", "h2c"],
              automatic_https: { disable: true },
              routes: echo,
            },
            up_tls: {
              listen: [`127.0.0.1:${upTls}`],
              listener_wrappers: [wrapper, { wrapper: "tls" }],
              tls_connection_policies: [{}],
              automatic_https: { disable: true },
              routes: echo,
            },
            front: {
              listen: [`127.0.0.1:${front}`],
              automatic_https: { disable: true },
              routes: frontRoutes,
            },
            front_pp: {
              listen: [`127.0.0.1:${frontPP}`],
              listener_wrappers: [wrapper],
              automatic_https: { disable: true },
              routes: frontRoutes,
            },
          },
        },
      },
    },
  });
  return { front, frontPP, stop: () => server.stop() };
}
const der = pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "");

Deno.test("proxy_protocol v1 and v2 to HTTP/1.1, h2c and TLS (h2, HTTP/1.1) upstreams: the client's address", async () => {
  const g = await start();
  try {
    for (const path of ["/v1", "/v2", "/h2c", "/tls", "/h2"]) {
      const r = await ask(g.front, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.body, `127.0.0.1 ${r.localPort}`, `${path}: the client's own address`);
      const version = path === "/h2c" || path === "/h2" ? "2.0" : "1.1";
      assert.match(r.headers, new RegExp(`\\r\\nvia: ${version} Gatehouse`, "i"), path);
      // behind a load balancer that sent a header of its own: that client's address
      const lb = encodeProxyV1({ hostname: "203.0.113.7", port: 4444 }, {
        hostname: "127.0.0.1",
        port: g.frontPP,
      });
      const via = await ask(g.frontPP, path, lb);
      assert.equal(via.body, "203.0.113.7 4444", `${path} behind a PROXY header`);
      const six = encodeProxyV2({
        source: { hostname: "2001:db8::7", port: 5555 },
        destination: { hostname: "::1", port: 443 },
      });
      assert.equal((await ask(g.frontPP, path, six)).body, "2001:db8::7 5555", `${path}, IPv6`);
    }
  } finally {
    await g.stop();
  }
});

/**
 * A raw upstream: the first bytes of each connection and the requests it carried; it answers
 * only connections that start with a PROXY header (the rest it closes, as the `REQUIRE`
 * policy does).
 */
function recorder() {
  const conns: { first: Uint8Array; requests: number; text: string }[] = [];
  const waiters: (() => void)[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const seen = { first: new Uint8Array(0), requests: 0, text: "" };
        conns.push(seen);
        const buf = new Uint8Array(65536);
        let pending = "";
        for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
          if (seen.first.length === 0) {
            seen.first = buf.slice(0, n);
            if (parseProxyHeader(seen.first).kind !== "header") break;
          }
          pending += dec.decode(buf.subarray(0, n));
          seen.text += dec.decode(buf.subarray(0, n));
          while (pending.includes("\r\n\r\n")) {
            pending = pending.slice(pending.indexOf("\r\n\r\n") + 4);
            seen.requests++;
            await conn.write(enc.encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
            waiters.splice(0).forEach((w) => w());
          }
        }
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    conns,
    /** Resolves once `count` requests whose text matches `re` were answered (fails after 10s). */
    async answered(re: RegExp, count = 1) {
      const end = Date.now() + 10_000;
      while (conns.filter((c) => c.requests > 0 && re.test(c.text)).length < count) {
        if (Date.now() > end) throw new Error(`no answered request matching ${re}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 500);
        });
      }
    },
    close: () => listener.close(),
  };
}

Deno.test("proxy_protocol: Caddy's bytes; a connection carries one client's requests", async () => {
  const up = recorder();
  const port = freePort();
  const route = (version: string) => ({
    match: [{ path: [`/${version}`] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${up.port}` }],
      transport: { protocol: "http", proxy_protocol: version },
    }],
    terminal: true,
  });
  const health = {
    match: [{ path: ["/health"] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${up.port}` }],
      transport: { protocol: "http", proxy_protocol: "v2" },
      health_checks: {
        active: { uri: "/hc", interval: "100ms", timeout: "2s", expect_body: "^ok$" },
      },
    }],
    terminal: true,
  };
  const server = await startServer({
    config: {
      admin: { disabled: true },
      apps: {
        http: {
          servers: {
            s: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              routes: [route("v1"), route("v2"), health],
            },
          },
        },
      },
    },
  });
  try {
    /** The upstream connections that carried requests for `path`. */
    const of = (path: string) => up.conns.filter((c) => c.text.includes(`GET ${path} `));
    const v1 = await ask(port, "/v1");
    const first = of("/v1")[0].first;
    assert.equal(
      dec.decode(first.subarray(0, first.indexOf(10) + 1)),
      `PROXY TCP4 127.0.0.1 0.0.0.0 ${v1.localPort} 0\r\n`,
    );
    const v2 = await ask(port, "/v2");
    const p = v2.localPort;
    assert.deepEqual(
      [...of("/v2")[0].first.subarray(0, 28)],
      [
        ...[0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a],
        0x21, // version 2, PROXY
        0x11, // TCP over IPv4
        0x00,
        0x0c, // 12 address bytes
        ...[127, 0, 0, 1],
        ...[0, 0, 0, 0],
        p >> 8,
        p & 0xff,
        0,
        0,
      ],
    );
    // two requests on one client connection share an upstream connection; another client
    // gets its own
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const request = enc.encode("GET /v1 HTTP/1.1\r\nHost: a\r\n\r\n");
    const buf = new Uint8Array(4096);
    const one = async () => {
      await conn.write(request);
      let text = "";
      while (!text.endsWith("ok")) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += dec.decode(buf.subarray(0, n));
      }
      return text;
    };
    const before = of("/v1").length;
    assert.match(await one(), /^HTTP\/1\.1 200/);
    assert.match(await one(), /^HTTP\/1\.1 200/);
    assert.equal(of("/v1").length, before + 1, "one upstream connection for the one client");
    assert.equal(of("/v1").at(-1)!.requests, 2);
    await ask(port, "/v1");
    assert.equal(of("/v1").length, before + 2, "another client, another connection");
    conn.close();
    // active health checks start with the LOCAL command: the upstream answers them
    // two checks answered: the first one's outcome (status and body) has been taken
    await up.answered(/GET \/hc /, 2);
    const check = up.conns.find((c) => /GET \/hc /.test(c.text))!;
    const header = parseProxyHeader(check.first);
    assert.ok(header.kind === "header" && header.header.command === "local");
    assert.equal((await ask(port, "/health")).status, 200);
  } finally {
    await server.stop();
    up.close();
  }
});

Deno.test("proxy_protocol: v1 or v2 only; refused with a forward proxy and with HTTP/3; the Caddyfile", async () => {
  const config = (transport: Record<string, unknown>) => ({
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:0"],
            routes: [{
              handle: [{
                handler: "reverse_proxy",
                upstreams: [{ dial: "127.0.0.1:1" }],
                transport: { protocol: "http", ...transport },
              }],
            }],
          },
        },
      },
    },
  });
  await validateConfig(config({ proxy_protocol: "v2" }));
  await assert.rejects(
    () => validateConfig(config({ proxy_protocol: "v3" })),
    /transport\.proxy_protocol: unexpected proxy protocol version "v3" \(v1 or v2\)/,
  );
  await assert.rejects(
    () =>
      validateConfig(config({
        proxy_protocol: "v1",
        network_proxy: { from: "url", url: "http://127.0.0.1:3128" },
      })),
    /transport\.proxy_protocol: not supported .*forward proxy/,
  );
  await assert.rejects(
    () => validateConfig(config({ proxy_protocol: "v1", versions: ["3"], tls: {} })),
    /transport\.proxy_protocol: not supported .*versions 3/,
  );
  const adapted = adaptGatehousefile(
    ":80 {\n\treverse_proxy 127.0.0.1:1 {\n\t\ttransport http {\n\t\t\tproxy_protocol v2\n\t\t}\n\t}\n}\n",
  ).result as { apps: { http: { servers: Record<string, { routes: unknown[] }> } } };
  assert.match(JSON.stringify(adapted.apps.http.servers), /"proxy_protocol":"v2"/);
});

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join("."));
const v6 = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }).map((g) =>
  g.map((x) => x.toString(16)).join(":")
);
const mapped = v4.map((a) => `::ffff:${a}`);
const zoned = v6.map((a) => `${a}%eth0`);
const anyIP = fc.oneof(v4, v6, mapped, zoned);
const RUNS = { numRuns: 300 };

Deno.test("proxy_protocol: the writer and the listener's parser agree both ways", () => {
  // writer -> parser: whatever the client's address looks like, it reads back as the same IP
  fc.assert(
    fc.property(anyIP, fc.nat(65535), fc.constantFrom("v1", "v2"), (ip, port, version) => {
      const bytes = proxyProtocolHeader(version as "v1" | "v2", { hostname: ip, port });
      const v = parseProxyHeader(bytes);
      assert.equal(v.kind, "header");
      if (v.kind !== "header") return;
      assert.equal(v.length, bytes.length, "the header is all that was written");
      assert.equal(v.header.version, version === "v1" ? 1 : 2);
      const src = v.header.source!;
      assert.ok(src.transport === "tcp");
      assert.equal(parseIP(src.hostname), parseIP(ip), `${src.hostname} for ${ip}`);
      assert.equal(src.port, port);
      const dst = v.header.destination!;
      assert.ok(dst.transport === "tcp");
      assert.equal(dst.port, 0);
      assert.equal(dst.hostname.includes(":"), src.hostname.includes(":"), "one family");
    }),
    RUNS,
  );
  // parser -> writer: a header the parser accepts, written again from what it read, is the
  // same bytes when it was written in the canonical form, and reads back the same otherwise
  fc.assert(
    fc.property(fc.oneof(v4, v6), fc.nat(65535), fc.boolean(), (ip, port, two) => {
      const given = two
        ? encodeProxyV2({
          source: { hostname: ip, port },
          destination: { hostname: ip.includes(":") ? "::" : "0.0.0.0", port: 0 },
        })
        : encodeProxyV1({ hostname: headerIP(ip)!, port }, {
          hostname: ip.includes(":") ? "::" : "0.0.0.0",
          port: 0,
        });
      const read = parseProxyHeader(given);
      assert.equal(read.kind, "header");
      if (read.kind !== "header") return;
      const src = read.header.source as { hostname: string; port: number };
      const again = proxyProtocolHeader(two ? "v2" : "v1", src);
      assert.deepEqual([...again], [...given]);
      const back = parseProxyHeader(again);
      assert.ok(back.kind === "header");
      assert.deepEqual(back.header.source, read.header.source);
    }),
    RUNS,
  );
  // no address: UNKNOWN (v1) or PROXY with no addresses (v2); health checks: LOCAL
  for (const version of ["v1", "v2"] as const) {
    const none = parseProxyHeader(proxyProtocolHeader(version, null));
    assert.ok(none.kind === "header" && none.header.command === "proxy" && !none.header.source);
    const local = parseProxyHeader(proxyProtocolLocal(version));
    assert.ok(local.kind === "header" && !local.header.source);
    if (version === "v2") assert.ok(local.kind === "header" && local.header.command === "local");
  }
});
