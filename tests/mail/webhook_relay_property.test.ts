/**
 * Property tests of what the new routes and the listener read from the network: any delivery
 * the listener gets is forwarded only when its signature is right (else 401, nothing sent),
 * and it never throws; any `prefix` and any `/docs/assets/<name>` get a documented answer.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { signWebhook } from "../../mail.ts";
import { forwarder } from "../../lib/mail/webhook_relay.ts";
import { OPERATOR_TOKEN, startMail } from "./_harness.ts";

const SECRET = "whsec_property_test_secret";

Deno.test("listener: any delivery is forwarded only with a right signature, never throws", async () => {
  const got: string[] = [];
  const app = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    got.push(await req.text());
    return new Response(null, { status: 204 });
  });
  const handle = forwarder({ secret: SECRET, forwardTo: `http://127.0.0.1:${app.addr.port}/` });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 300 }),
        fc.option(fc.integer({ min: -2e9, max: 4e9 })),
        fc.option(fc.string({ maxLength: 80 })),
        fc.boolean(),
        async (body, ts, signature, sign) => {
          const before = got.length;
          const now = Math.floor(Date.now() / 1000);
          const headers = new Headers({ "x-gatehouse-event": "item.received" });
          if (sign) {
            headers.set("x-gatehouse-timestamp", String(now));
            headers.set("x-gatehouse-signature", await signWebhook(SECRET, now, body));
          } else {
            if (ts !== null) headers.set("x-gatehouse-timestamp", String(ts));
            if (signature !== null) {
              try {
                headers.set("x-gatehouse-signature", signature);
              } catch { /* not a header value */ }
            }
          }
          const res = await handle(
            new Request("http://listener/", { method: "POST", headers, body }),
          );
          if (sign) {
            assert.equal(res.status, 204);
            assert.equal(got.length, before + 1);
            assert.equal(got.at(-1), body);
          } else {
            assert.equal(res.status, 401);
            assert.equal(got.length, before);
          }
        },
      ),
      { numRuns: 150, interruptAfterTimeLimit: 20_000 },
    );
  } finally {
    await app.shutdown();
  }
});

Deno.test("mailroom ?prefix= and /docs/assets/<name>: any value gets a documented answer", async () => {
  const h = await startMail();
  try {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), async (p, n) => {
        const q = new URLSearchParams({ prefix: p });
        const r = await fetch(`${h.base}/mailroom/api-keys?${q}`, {
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
        });
        const body = await r.json();
        if (/^[A-Za-z0-9_-]{4,12}$/.test(p)) assert.deepEqual([r.status, body.data], [200, []]);
        else assert.deepEqual([r.status, body.code], [422, 19]);
        const a = await fetch(`${h.base}/docs/assets/${encodeURIComponent(n)}`);
        await a.body?.cancel();
        if (n === "init.js" || n === "reference.js") assert.equal(a.status, 200);
        else assert.equal(a.status, 404);
      }),
      { numRuns: 100, interruptAfterTimeLimit: 20_000 },
    );
  } finally {
    await h.close(); // also fails on any answer that does not match the OpenAPI document
  }
});
