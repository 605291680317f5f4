/**
 * `reverse_proxy` in front of a hostile upstream, through a real `gatehouse run` process:
 * every malformed upstream answer gives the client 502 (or a body cut short when the head had
 * already been relayed), the upstream connection is closed, and while the hostile upstream
 * holds its connection the other site and the admin API keep answering. Plain and TLS
 * upstreams, `deno` and `node` listener engines.
 */
import assert from "node:assert/strict";
import {
  getText,
  HostileUpstream,
  type ProxyProcess,
  readAnswer,
  sendRequest,
  startProxyProcess,
} from "./hostile.ts";
import { CASES, type UpstreamCase } from "./upstream_cases.ts";
import { makePki } from "./pki.ts";

const WATCHDOG = 20000;

/** Resolves `p`, or fails after the watchdog instead of hanging. */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Error(`${what}: nothing after ${WATCHDOG} ms`)), WATCHDOG);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The other site and the admin API answer. */
async function othersAnswer(p: ProxyProcess, when: string): Promise<void> {
  assert.equal(
    await getText(`http://127.0.0.1:${p.otherPort}/`, WATCHDOG),
    "other site",
    `other site ${when}`,
  );
  const r = await fetch(`${p.admin}/config/`, { signal: AbortSignal.timeout(WATCHDOG) });
  await r.body?.cancel();
  assert.equal(r.status, 200, `admin API ${when}`);
}

async function runCase(
  p: ProxyProcess,
  up: HostileUpstream,
  name: string,
  c: UpstreamCase,
): Promise<void> {
  const ev = up.events(name);
  const conn = await sendRequest(p.proxyPort, `/case/${name}`);
  try {
    const answer = readAnswer(conn, "GET", WATCHDOG);
    answer.catch(() => {}); // awaited below; a failure meanwhile must not go unhandled
    await within(ev.hit, `${name}: request reached the upstream`);
    await othersAnswer(p, `while ${name} is in flight`);
    await within(ev.wrote, `${name}: upstream wrote`);
    await othersAnswer(p, `after ${name} was answered by the upstream`);
    const a = await answer;
    const e = c.expect;
    if ("abort" in e) {
      // The head was relayed and the body is cut short, or (node engine, which reads the
      // first chunks before it sends the head) nothing was sent yet and the answer is 502.
      if (a.status !== 502) {
        assert.equal(a.status, 200, `${name}: head relayed`);
        assert.equal(a.complete, false, `${name}: body must be cut short, got ${a.head}`);
      }
    } else if (!("body" in e)) {
      assert.equal(a.status, 502, `${name}: got ${a.head}`);
    } else {
      assert.equal(a.status, e.status, `${name}: got ${a.head}`);
      assert.equal(new TextDecoder().decode(a.body), e.body, name);
      assert.ok(a.complete, `${name}: complete body`);
      if ("contentLength" in e && e.contentLength !== undefined) {
        const lines = a.head.split("\r\n").filter((l) => /^content-length:/i.test(l));
        assert.deepEqual(lines.map((l) => l.split(":")[1].trim()), [e.contentLength], name);
      }
    }
    if (!("body" in e)) {
      // The proxy dropped that upstream connection rather than keeping it for another request.
      await within(ev.closed, `${name}: upstream connection closed by the proxy`);
    }
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

async function suite(
  t: Deno.TestContext,
  o: { tls?: { cert: string; key: string }; engine?: "deno" | "node" },
): Promise<void> {
  const up = new HostileUpstream(CASES, o.tls);
  const proxy: Record<string, unknown> = {
    handler: "reverse_proxy",
    upstreams: [{ dial: up.dial }],
  };
  if (o.tls) proxy.transport = { protocol: "http", tls: { insecure_skip_verify: true } };
  const p = await startProxyProcess(proxy, o.engine);
  try {
    for (const [name, c] of Object.entries(CASES)) {
      await t.step(name, () => runCase(p, up, name, c));
    }
    // After all of it, a normal answer still goes through.
    const conn = await sendRequest(p.proxyPort, "/fine");
    const a = await readAnswer(conn);
    conn.close();
    assert.equal(new TextDecoder().decode(a.body), "ok: /fine");
    // Bodies cut short are logged.
    assert.match(p.output(), /aborting with incomplete response/);
  } finally {
    await p.stop();
    await up.close();
  }
}

Deno.test("reverse_proxy, hostile plain upstream: 502 or cut body, connection closed, others answer", async (t) => {
  await suite(t, {});
});

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });

Deno.test("reverse_proxy, hostile TLS upstream: same answers as plain", async (t) => {
  await suite(t, { tls: pki.leafs.local });
});

Deno.test("reverse_proxy, hostile upstream behind the node listener engine: same answers", async (t) => {
  await suite(t, { engine: "node" });
});
