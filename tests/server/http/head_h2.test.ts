/**
 * HEAD over HTTP/2 on the default (deno) engine, with curl (nghttp2) and a Node HTTP/2
 * client: the answer has the GET's status and headers, the `Content-Length` the body would
 * have (the handler's, or the body's own when it is short), no body, and the stream ends
 * cleanly (Deno.serve sent the body as DATA frames, which clients reset as PROTOCOL_ERROR).
 * HTTP/1.1 HEAD is unchanged, and the node engine's HTTP/1.1 HEAD has the same length.
 */
import assert from "node:assert/strict";
import { runServer } from "../fields/_server.ts";
import { makePki } from "./pki.ts";
import { h2Client, nodeAvailable } from "../parity2/_h2_client.ts";

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const routes = (root: string) => [
  {
    match: [{ path: ["/small"] }],
    handle: [{ handler: "static_response", body: "hello" }],
    terminal: true,
  },
  {
    match: [{ path: ["/files/*"] }],
    handle: [{ handler: "rewrite", strip_path_prefix: "/files" }, {
      handler: "file_server",
      root,
    }],
    terminal: true,
  },
  { handle: [{ handler: "static_response", status_code: 404 }] },
];

/** curl's view of a HEAD: exit code, status line and the headers, lower-cased. */
async function curlHead(url: string, ...args: string[]) {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "-I", ...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).replaceAll("\r", "");
  const [first, ...lines] = text.trim().split("\n");
  const status = first.trim();
  const headers = Object.fromEntries(
    lines.map((
      l,
    ) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  return { code: out.code, status, headers, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test({
  name:
    "HEAD over HTTP/2 (deno engine): headers and Content-Length of the GET, no body, a clean stream end",
  sanitizeResources: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "gatehouse-head-" });
    await Deno.writeFile(`${root}/big.bin`, new Uint8Array(300_000).fill(98));
    const ca = `${root}/ca.pem`;
    await Deno.writeTextFile(ca, pki.caPem);
    const srv = await runServer({
      servers: {
        h2c: { listen: ["127.0.0.1:0"], protocols: ["h1", "h2c"], routes: routes(root) },
        tls: { listen: ["127.0.0.1:0"], tls_connection_policies: [{}], routes: routes(root) },
        node: { listen: ["127.0.0.1:0"], listener_engine: "node", routes: routes(root) },
      },
    }, {
      tls: {
        certificates: {
          load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }],
        },
      },
    });
    try {
      const h2c = `http://127.0.0.1:${srv.ports("h2c")[0]}`;
      const tls = `https://localhost:${srv.ports("tls")[0]}`;
      for (
        const [origin, args] of [
          [h2c, ["--http2-prior-knowledge"]],
          [tls, ["--http2", "--cacert", ca]],
        ] as const
      ) {
        const small = await curlHead(`${origin}/small`, ...args);
        assert.equal(small.code, 0, small.stderr);
        assert.equal(small.status, "HTTP/2 200");
        assert.equal(small.headers["content-length"], "5");
        assert.equal(small.headers["content-type"], "text/plain; charset=utf-8");
        const big = await curlHead(`${origin}/files/big.bin`, ...args);
        assert.equal(big.code, 0, big.stderr);
        assert.equal(big.status, "HTTP/2 200");
        assert.equal(big.headers["content-length"], "300000");
        assert.ok(big.headers["etag"]);
        const missing = await curlHead(`${origin}/nothing`, ...args);
        assert.equal(missing.code, 0, missing.stderr);
        assert.equal(missing.status, "HTTP/2 404");
      }
      // HTTP/1.1 as before, and on the node engine with the same length (node:http gave none)
      for (const origin of [h2c, `http://127.0.0.1:${srv.ports("node")[0]}`]) {
        const h1 = await curlHead(`${origin}/small`, "--http1.1");
        assert.equal(h1.status, "HTTP/1.1 200 OK");
        assert.equal(h1.headers["content-length"], "5", origin);
      }
      // a Node HTTP/2 client: HEAD then GET on one session, neither reset
      if (nodeAvailable()) {
        const c = h2Client({ origin: h2c });
        try {
          const head = await c.request({ path: "/small", method: "HEAD" });
          assert.equal(head.status, 200, JSON.stringify(head));
          assert.equal(head.length, 0);
          assert.equal(head.headers!["content-length"], "5");
          const get = await c.request({ path: "/small" });
          assert.equal(get.body, "hello");
          assert.equal(c.lines.filter((l) => l.ev === "connected").length, 1);
        } finally {
          await c.close();
        }
      }
    } finally {
      await srv.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});
