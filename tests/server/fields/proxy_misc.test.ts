/**
 * Behaviour probes for `reverse_proxy` fields no other test exercised: `buffer_requests`,
 * `buffer_responses` (with `max_buffer_size`), `root_ca_pem_files` /
 * `ca.trusted_ca_certs_pem_files`, and `copy_response_headers`' `exclude`.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { makePki } from "../http/pki.ts";

Deno.test("fields: reverse_proxy buffer_requests sends a chunked request body with its length", async () => {
  const seen: (string | null)[] = [];
  const up = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push(req.headers.get("content-length"));
    return new Response(await req.text());
  });
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const proxy = (o: Record<string, unknown>) => [{
    handle: [{ handler: "reverse_proxy", upstreams: [{ dial }], ...o }],
  }];
  const srv = await startHttp({
    servers: {
      buffered: {
        listen: ["127.0.0.1:0"],
        routes: proxy({ buffer_requests: true, max_buffer_size: 1 << 20 }),
      },
      streamed: { listen: ["127.0.0.1:0"], routes: proxy({}) },
    },
  });
  try {
    for (const name of ["buffered", "streamed"]) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode("hello "));
          c.enqueue(new TextEncoder().encode("world"));
          c.close();
        },
      });
      const r = await fetch(srv.url(name), { method: "POST", body, duplex: "half" } as RequestInit);
      assert.equal(await r.text(), "hello world");
    }
    assert.deepEqual(seen, ["11", null], "buffered: a length; streamed: chunked");
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});

Deno.test("fields: transport tls root_ca_pem_files and ca.trusted_ca_certs_pem_files", async () => {
  const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const other = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const up = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: pki.leafs.up.cert,
      key: pki.leafs.up.key,
      onListen() {},
    },
    () => new Response("secure"),
  );
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-cafile-" });
  await Deno.writeTextFile(`${dir}/ca.pem`, pki.caPem);
  await Deno.writeTextFile(`${dir}/other.pem`, other.caPem);
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const proxy = (tls: Record<string, unknown>) => [{
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial }],
      transport: { protocol: "http", tls },
    }],
  }];
  const srv = await startHttp({
    servers: {
      legacy: { listen: ["127.0.0.1:0"], routes: proxy({ root_ca_pem_files: [`${dir}/ca.pem`] }) },
      inline: {
        listen: ["127.0.0.1:0"],
        routes: proxy({
          ca: { provider: "inline", trusted_ca_certs_pem_files: [`${dir}/ca.pem`] },
        }),
      },
      wrong: {
        listen: ["127.0.0.1:0"],
        routes: proxy({ root_ca_pem_files: [`${dir}/other.pem`] }),
      },
    },
  });
  try {
    assert.equal(await (await fetch(srv.url("legacy"))).text(), "secure");
    assert.equal(await (await fetch(srv.url("inline"))).text(), "secure");
    const r = await fetch(srv.url("wrong"));
    await r.body?.cancel();
    assert.equal(r.status, 502, "a certificate from another CA is refused");
  } finally {
    await srv.stop();
    await up.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fields: reverse_proxy buffer_responses sends a streamed upstream body with its length", async () => {
  const up = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("part one, "));
          c.enqueue(new TextEncoder().encode("part two"));
          c.close();
        },
      }),
    ));
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const proxy = (o: Record<string, unknown>) => [{
    handle: [{ handler: "reverse_proxy", upstreams: [{ dial }], ...o }],
  }];
  const srv = await startHttp({
    servers: {
      buffered: { listen: ["127.0.0.1:0"], routes: proxy({ buffer_responses: true }) },
      streamed: { listen: ["127.0.0.1:0"], routes: proxy({}) },
    },
  });
  try {
    const head = async (name: string) => {
      const c = await Deno.connect({ hostname: "127.0.0.1", port: srv.ports(name)[0] });
      await c.write(
        new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
      );
      let text = "";
      const buf = new Uint8Array(4096);
      for (let n; (n = await c.read(buf)) !== null;) {
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      c.close();
      return text.toLowerCase();
    };
    assert.match(await head("buffered"), /\r\ncontent-length: 18\r\n/);
    assert.match(await head("streamed"), /\r\ntransfer-encoding: chunked\r\n/);
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});

Deno.test("fields: copy_response_headers exclude leaves those fields out", async () => {
  const up = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("from upstream", { status: 500, headers: { "x-keep": "1", "x-drop": "2" } }),
  );
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{
            handler: "reverse_proxy",
            upstreams: [{ dial }],
            handle_response: [{
              match: { status_code: [500] },
              routes: [{
                handle: [
                  { handler: "copy_response_headers", exclude: ["X-Drop"] },
                  { handler: "static_response", body: "replaced" },
                ],
              }],
            }],
          }],
        }],
      },
    },
  });
  try {
    const r = await fetch(srv.url());
    assert.equal(await r.text(), "replaced");
    assert.equal(r.headers.get("x-keep"), "1");
    assert.equal(r.headers.get("x-drop"), null);
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});
