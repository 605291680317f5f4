/**
 * The upstream parser's properties through a real `gatehouse run` process (fewer runs than
 * the unit properties): generated valid responses are relayed byte-exact; hostile mutations
 * give 502, a cut body, or (when the mutation left a valid response) that response, as the
 * parser reading the same bytes says; the proxy never hangs and the other site keeps
 * answering.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  getText,
  type HostileCase,
  HostileUpstream,
  readAnswer,
  sendRequest,
  startProxyProcess,
} from "./hostile.ts";
import { mutatedResponseArb, readWhole, show, validResponseArb } from "./upstream_arb.ts";

const LIMIT = { interruptAfterTimeLimit: 60000 };

Deno.test("reverse_proxy process properties: valid upstream responses relayed exactly, mutated ones 502/cut/as parsed", async (t) => {
  const cases: Record<string, HostileCase> = {};
  const up = new HostileUpstream(cases);
  const p = await startProxyProcess({ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] });
  let n = 0;
  const through = async (bytes: Uint8Array) => {
    const name = `p${n++}`;
    // The upstream closes after its bytes: a truncated body ends instead of waiting forever.
    cases[name] = { reply: [bytes], close: true };
    const conn = await sendRequest(p.proxyPort, `/case/${name}`);
    try {
      return await readAnswer(conn);
    } finally {
      conn.close();
    }
  };
  try {
    await t.step("valid responses", async () => {
      await fc.assert(
        fc.asyncProperty(validResponseArb, async (r) => {
          const a = await through(r.bytes);
          assert.equal(a.status, r.status, show(r.bytes));
          assert.ok(a.complete);
          // 205 Reset Content never carries content, whatever the upstream sent.
          assert.deepEqual(a.body, r.status === 205 ? new Uint8Array(0) : r.body);
          const got = new Headers();
          for (const line of a.head.split("\r\n").slice(1)) {
            const i = line.indexOf(":");
            got.append(line.slice(0, i), line.slice(i + 1).trim());
          }
          const want = new Headers(r.headers);
          for (const [k] of r.headers) assert.equal(got.get(k), want.get(k), k);
        }),
        { numRuns: 40, ...LIMIT },
      );
    });
    await t.step("mutated responses", async () => {
      await fc.assert(
        fc.asyncProperty(mutatedResponseArb, async (bytes) => {
          const parsed = readWhole(bytes);
          const a = await through(bytes);
          if (parsed.kind === "head-error" || (parsed.kind === "ok" && parsed.status === 101)) {
            assert.equal(a.status, 502, `${show(bytes)} ${parsed.kind}`);
          } else if (parsed.status === 205) {
            // The body is dropped unread (or, when it was read whole first, a short one is 502).
            if (a.status !== 502 || parsed.kind === "ok") {
              assert.equal(a.status, 205, show(bytes));
              assert.equal(a.body.length, 0, show(bytes));
            }
          } else if (parsed.kind === "body-error") {
            if (a.status !== 502) {
              assert.equal(a.status, parsed.status, show(bytes));
              assert.equal(a.complete, false, show(bytes));
            }
          } else {
            assert.equal(a.status, parsed.status, show(bytes));
            assert.ok(a.complete, show(bytes));
            assert.deepEqual(a.body, parsed.body, show(bytes));
          }
          assert.equal(await getText(`http://127.0.0.1:${p.otherPort}/`), "other site");
        }),
        { numRuns: 80, ...LIMIT },
      );
    });
    const r = await fetch(`${p.admin}/config/`);
    await r.body?.cancel();
    assert.equal(r.status, 200);
  } finally {
    await p.stop();
    await up.close();
  }
});
