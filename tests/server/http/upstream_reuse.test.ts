/**
 * Upstream keep-alive through a real `gatehouse run` process: a connection is reused only
 * when its response ended exactly where its framing said. Bytes after a body (in the same
 * packet, a moment later while the connection is idle, after a 204 or a HEAD answer) close
 * the connection and never become the answer to the next request.
 */
import assert from "node:assert/strict";
import { HostileUpstream, readAnswer, sendRequest, startProxyProcess } from "./hostile.ts";

const OK = "HTTP/1.1 200 OK\r\n";
const EVIL = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL";

const CASES = {
  keepalive_ok: { reply: [`${OK}Content-Length: 2\r\n\r\nhi`] },
  extra_same_write: { reply: [`${OK}Content-Length: 2\r\n\r\nhi${EVIL}`] },
  extra_delayed: { reply: [`${OK}Content-Length: 2\r\n\r\nhi`, { delay: 300 }, EVIL] },
  extra_crlf: { reply: [`${OK}Content-Length: 2\r\n\r\nhi\r\n`] },
  extra_chunked: { reply: [`${OK}Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n${EVIL}`] },
  extra_large: {
    reply: [`${OK}Content-Length: 100000\r\n\r\n${"x".repeat(100000)}`, { delay: 100 }, EVIL],
  },
  extra_after_204: { reply: [`HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\nEVIL`] },
  extra_after_head: { reply: [`${OK}Content-Length: 4\r\n\r\nEVIL`] },
};

async function get(port: number, target: string, method = "GET") {
  const conn = await sendRequest(port, target, { method });
  try {
    const a = await readAnswer(conn, method);
    return { status: a.status, body: new TextDecoder().decode(a.body) };
  } finally {
    conn.close();
  }
}

Deno.test("reverse_proxy: a clean response keeps its upstream connection for the next request", async () => {
  const up = new HostileUpstream(CASES);
  const p = await startProxyProcess({ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] });
  try {
    assert.deepEqual(await get(p.proxyPort, "/case/keepalive_ok"), { status: 200, body: "hi" });
    await up.events("keepalive_ok").wrote;
    const before = up.accepted;
    assert.deepEqual(await get(p.proxyPort, "/case/keepalive_ok/2"), { status: 200, body: "hi" });
    assert.equal(up.accepted, before, "the second request went over the pooled connection");
  } finally {
    await p.stop();
    await up.close();
  }
});

Deno.test("reverse_proxy: bytes after a body close the upstream connection and never answer the next request", async (t) => {
  const up = new HostileUpstream(CASES);
  const p = await startProxyProcess({ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] });
  const expected: Record<string, { status: number; body: string; method?: string }> = {
    extra_same_write: { status: 200, body: "hi" },
    extra_delayed: { status: 200, body: "hi" },
    extra_crlf: { status: 200, body: "hi" },
    extra_chunked: { status: 200, body: "hi" },
    extra_large: { status: 200, body: "x".repeat(100000) },
    extra_after_204: { status: 204, body: "" },
    extra_after_head: { status: 200, body: "", method: "HEAD" },
  };
  try {
    for (const [name, want] of Object.entries(expected)) {
      await t.step(name, async () => {
        const first = await get(p.proxyPort, `/case/${name}`, want.method);
        assert.deepEqual(first, { status: want.status, body: want.body });
        const ev = up.events(name);
        await ev.wrote;
        // Whatever the upstream sent after the body, the next answer is the next response.
        const next = await get(p.proxyPort, `/case/next_after_${name}`);
        assert.deepEqual(next, { status: 200, body: `ok: /case/next_after_${name}` });
        await ev.closed;
        assert.equal(ev.hits, 1);
      });
    }
  } finally {
    await p.stop();
    await up.close();
  }
});
