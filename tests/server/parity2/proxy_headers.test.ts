/**
 * What `reverse_proxy` changes in the fields and framing up and down, with Caddy 2.6.2 as the
 * oracle (a raw upstream records each request head byte for byte):
 *
 * - `Alt-Svc` is a hop-by-hop field (Caddy's `hopHeaders` list starts with it): the upstream's
 *   never reaches the client;
 * - a request that names no encoding (and asks for no range, and is not HEAD) asks the upstream
 *   for gzip, and a gzip answer is decoded for the client (Go's transport, under Caddy's
 *   `compression`, on by default); `compression: false` asks for nothing;
 * - a bodiless request goes unframed (no `Transfer-Encoding: chunked`), `Content-Length: 0`
 *   for POST (Go's transfer writer);
 * - header operations keep a placeholder nobody knows as written (`ReplaceKnown`), and a known
 *   one without a value is empty;
 * - `header Server "X"` before a handler that answers is the answer's `Server`.
 *
 * And, after Caddy 2.6.2 (current Caddy's reverseproxy.go, "reverseproxy: Via header" #6275,
 * in v2.10.0): the upstream request carries `Via: <client's version> Caddy`, here `...
 * Gatehouse`, after the client's own; the answer drops our `Server` (one set before the proxy
 * too) and says `Via: <upstream's version> Gatehouse` ahead of the upstream's.
 */
import assert from "node:assert/strict";
import { serve } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyAvailable, startCaddy } from "./caddy.ts";
import { nodeH2 } from "./_h2.ts";
import { nodeAvailable } from "./_h2_client.ts";

const enc = new TextEncoder();

/** A raw upstream: records each request head, answers by path (one request a connection). */
function recorder() {
  const heads: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const answer = async (path: string): Promise<Uint8Array> => {
    if (path.includes("/gz")) {
      const gz = new Uint8Array(
        await new Response(
          new Blob(["hello gzip"]).stream().pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer(),
      );
      const head = enc.encode(
        `HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${gz.length}\r\n` +
          "connection: close\r\n\r\n",
      );
      const all = new Uint8Array(head.length + gz.length);
      all.set(head);
      all.set(gz, head.length);
      return all;
    }
    const server = path === "/server" ? "server: up/1\r\nvia: 1.0 edge\r\n" : "";
    return enc.encode(
      `HTTP/1.1 200 OK\r\nalt-svc: h3=":443"; ma=60\r\n${server}content-length: 2\r\n` +
        "connection: close\r\n\r\nok",
    );
  };
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(65536);
        let text = "";
        while (!text.includes("\r\n\r\n")) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) return;
          text += new TextDecoder().decode(buf.subarray(0, n));
        }
        heads.push(text.slice(0, text.indexOf("\r\n\r\n")));
        await conn.write(await answer(text.split(" ")[1])).catch(() => {});
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    heads,
    close: () => listener.close(),
  };
}

function routes(dial: string) {
  const proxy = (transport?: Record<string, unknown>) => ({
    handler: "reverse_proxy",
    upstreams: [{ dial }],
    ...(transport ? { transport: { protocol: "http", ...transport } } : {}),
    headers: {
      request: {
        set: {
          "X-Unknown": ["a{foo}b"],
          "X-Known": ["{http.request.header.x-missing}c"],
          "X-Other": ["{upstream_bogus}"],
          "X-Var": ["{http.vars.missing}v"],
        },
      },
    },
  });
  return [
    {
      match: [{ path: ["/server-x"] }],
      handle: [
        { handler: "headers", response: { set: { Server: ["X"] } } },
        { handler: "static_response", body: "hi" },
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/server-none"] }],
      handle: [
        { handler: "headers", response: { delete: ["Server"] } },
        { handler: "static_response", body: "hi" },
      ],
      terminal: true,
    },
    { match: [{ path: ["/plain/*"] }], handle: [proxy({ compression: false })], terminal: true },
    { handle: [proxy()] },
  ];
}

/** One request's view: what the upstream got (the fields that differ) and what came back. */
interface Seen {
  up: Record<string, string | null> | null;
  status: number;
  body: string;
  encoding: string | null;
  altSvc: string | null;
  server: string | null;
}

const REQUESTS: [string, string, Record<string, string>][] = [
  ["OPTIONS", "/options", {}],
  ["DELETE", "/delete", {}],
  ["POST", "/post", { "content-length": "0" }],
  ["GET", "/gz", {}],
  ["GET", "/gz/br", { "accept-encoding": "br" }],
  ["GET", "/range", { range: "bytes=0-1" }],
  ["HEAD", "/head", {}],
  ["GET", "/plain/gz", {}],
  ["GET", "/server-x", {}],
  ["GET", "/server-none", {}],
];

async function scenario(base: string, up: ReturnType<typeof recorder>): Promise<Seen[]> {
  const out: Seen[] = [];
  for (const [method, path, headers] of REQUESTS) {
    const before = up.heads.length;
    const r = await raw(base, method, path, headers);
    const head = up.heads.length > before ? up.heads[up.heads.length - 1] : null;
    const field = (name: string) => {
      const m = head?.match(new RegExp(`\\r\\n${name}: ([^\\r]*)`, "i"));
      return m ? m[1] : null;
    };
    out.push({
      up: head === null ? null : {
        "content-length": field("content-length"),
        "transfer-encoding": field("transfer-encoding"),
        "accept-encoding": field("accept-encoding"),
        "x-unknown": field("x-unknown"),
        "x-known": field("x-known"),
        "x-other": field("x-other"),
        "x-var": field("x-var"),
      },
      status: r.status,
      body: r.text,
      encoding: r.headers.get("content-encoding"),
      altSvc: r.headers.get("alt-svc"),
      server: path.startsWith("/server-") ? r.headers.get("server") : null,
    });
  }
  return out;
}

Deno.test("reverse_proxy: Alt-Svc dropped, gzip asked for and decoded, bodiless requests unframed, unknown placeholders kept, header Server X, as Caddy 2.6.2", async () => {
  const up = recorder();
  const srv = await serve(routes(up.dial));
  try {
    const ours = await scenario(srv.url(), up);
    const at = (path: string) => ours[REQUESTS.findIndex((r) => r[1] === path)];
    const fields = {
      "x-unknown": "a{foo}b",
      "x-known": "c",
      "x-other": "{upstream_bogus}",
      "x-var": "v",
    };
    assert.deepEqual(at("/options").up, {
      "content-length": null,
      "transfer-encoding": null,
      "accept-encoding": "gzip",
      ...fields,
    });
    assert.equal(at("/delete").up!["transfer-encoding"], null);
    assert.equal(at("/post").up!["content-length"], "0");
    assert.equal(at("/gz").body, "hello gzip", "decoded for the client");
    assert.equal(at("/gz").encoding, null);
    assert.equal(at("/gz/br").up!["accept-encoding"], "br", "the client's own, untouched");
    assert.equal(at("/gz/br").encoding, "gzip", "and not decoded");
    assert.equal(at("/range").up!["accept-encoding"], null);
    assert.equal(at("/head").up!["accept-encoding"], null);
    assert.equal(at("/plain/gz").up!["accept-encoding"], null, "compression: false");
    assert.equal(at("/plain/gz").encoding, "gzip");
    for (const s of ours) assert.equal(s.altSvc, null, "the upstream's Alt-Svc is dropped");
    assert.equal(at("/server-x").server, "X");
    assert.equal(at("/server-none").server, null);
    if (caddyAvailable()) {
      const caddy = await startCaddy(routes(up.dial));
      try {
        assert.deepEqual(ours, await scenario(caddy.url, up), "as Caddy 2.6.2");
      } finally {
        await caddy.stop();
      }
    }
  } finally {
    await srv.stop();
    up.close();
  }
});

Deno.test("reverse_proxy: Via up and down and no Server of ours on proxied answers, as current Caddy", async () => {
  const up = recorder();
  const h2 = nodeAvailable() ? await nodeH2() : null;
  const srv = await serve([
    ...(h2
      ? [{
        match: [{ path: ["/h2"] }],
        handle: [{
          handler: "reverse_proxy",
          upstreams: [{ dial: h2.dial }],
          transport: { protocol: "http", versions: ["h2c"] },
        }],
        terminal: true,
      }]
      : []),
    {
      handle: [
        { handler: "headers", response: { set: { Server: ["X"] } } },
        { handler: "reverse_proxy", upstreams: [{ dial: up.dial }] },
      ],
    },
  ]);
  try {
    const plain = await raw(srv.url(), "GET", "/plain", { via: "1.0 client-side" });
    const via = [...up.heads.at(-1)!.matchAll(/\r\nvia: ([^\r]*)/g)].map((m) => m[1]).join(", ");
    assert.equal(via, "1.0 client-side, 1.1 Gatehouse", "after the client's own");
    assert.equal(plain.headers.get("via"), "1.1 Gatehouse");
    assert.equal(plain.headers.get("server"), null, "ours (X, set before) is dropped");
    const withServer = await raw(srv.url(), "GET", "/server");
    assert.equal(withServer.headers.get("server"), "up/1", "the upstream's is kept");
    assert.equal(withServer.headers.get("via"), "1.1 Gatehouse, 1.0 edge", "ours first");
    if (h2) {
      const r = await raw(srv.url(), "GET", "/h2");
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("via"), "2.0 Gatehouse", "the upstream's version");
    }
  } finally {
    await srv.stop();
    up.close();
    await h2?.stop();
  }
});
