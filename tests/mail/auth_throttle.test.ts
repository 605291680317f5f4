/**
 * Wrong API keys and operator tokens are throttled per client and per key prefix, with the
 * state in the mail store's libSQL database: a real server on loopback, distinct clients as
 * distinct source addresses (127.0.0.x, bound with node:http's `localAddress`), and the
 * server's injectable clock for the backoff. The attacker is slowed to a handful of guesses an
 * hour; the right key keeps working for its owner from another client, and nobody stays
 * locked out once the guessing stops.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { createClient } from "@libsql/client";
import fc from "fast-check";
import { createMailServer } from "../../mail.ts";
import { clientKey } from "../../lib/mail/auth_throttle.ts";
import { OPERATOR_TOKEN, startMail } from "./_harness.ts";
import { ResponseChecker } from "./_openapi.ts";

interface Answer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  retryAfter: number | null;
}

/** GET `url` from source address `from` with `headers`. */
function callFrom(from: string, url: string, headers: Record<string, string>): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: Number(u.port),
      path: u.pathname + u.search,
      headers,
      localAddress: from,
      agent: false,
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => {
        const ra = res.headers["retry-after"];
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text),
          retryAfter: ra === undefined ? null : Number(ra),
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const ATTACKER = "127.0.0.2";
const OWNER = "127.0.0.3";

Deno.test("throttle: wrong keys from one client back off to ~15 min; the owner's key works from another client", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const h = await startMail({ now: () => now });
  try {
    const a = await h.account();
    const items = `${h.base}/items`;
    const wrong = (i: number) => ({ "x-api-key": `gh_live_${String(i).padStart(32, "x")}` });

    // 10 wrong keys are answered as wrong keys (401, code 429) ...
    for (let i = 0; i < 10; i++) {
      const r = await callFrom(ATTACKER, items, wrong(i));
      assert.deepEqual([r.status, r.body.code], [401, 429], `try ${i}`);
    }
    // ... the 11th makes the client wait 1 s, then 2, 4, ... (429, code 434, Retry-After)
    const eleventh = await callFrom(ATTACKER, items, wrong(10));
    assert.deepEqual([eleventh.status, eleventh.body.code, eleventh.retryAfter], [429, 434, 1]);
    assert.match(eleventh.body.message, /retry after 1 seconds/);
    // While it waits, even the right key is not checked from that client.
    const blocked = await callFrom(ATTACKER, items, { "x-api-key": a.apiKey });
    assert.deepEqual([blocked.status, blocked.body.code], [429, 434]);
    // The owner, elsewhere, is not affected.
    const owner = await callFrom(OWNER, items, { "x-api-key": a.apiKey });
    assert.equal(owner.status, 200);

    // An attacker that always waits exactly as told gets this many guesses in an hour:
    const start = now;
    let guesses = 11;
    let waited = eleventh.retryAfter!;
    const waits: number[] = [waited];
    while (now - start < 3600_000) {
      now += waited * 1000;
      const r = await callFrom(ATTACKER, items, wrong(guesses));
      guesses++;
      assert.equal(r.status, 429);
      waited = r.retryAfter!;
      waits.push(waited);
    }
    assert.deepEqual(waits.slice(0, 11), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900]);
    assert.ok(guesses <= 30, `${guesses} guesses in the first hour`);
    assert.equal(Math.max(...waits), 900, "never more than 15 minutes");

    // When the guessing stops, the client is free again after its last wait ...
    now += waited * 1000;
    const back = await callFrom(ATTACKER, items, { "x-api-key": a.apiKey });
    assert.equal(back.status, 200, "the right key works again from the same client");
    // ... and one hour after its last wrong key, it has its 10 free tries again.
    now += 3600_000;
    for (let i = 0; i < 10; i++) {
      assert.equal((await callFrom(ATTACKER, items, wrong(1000 + i))).status, 401);
    }
  } finally {
    await h.close();
  }
});

Deno.test("throttle: a distributed guess at one key's prefix backs off that prefix, except for the owner's known clients", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const h = await startMail({ now: () => now });
  try {
    const a = await h.account();
    const items = `${h.base}/items`;
    const prefix = a.apiKey.slice(0, 12);
    // The owner's usual client.
    assert.equal((await callFrom(OWNER, items, { "x-api-key": a.apiKey })).status, 200);

    // 50 clients, one wrong key each, all with the owner's prefix: answered as wrong keys.
    for (let i = 0; i < 50; i++) {
      const r = await callFrom(`127.0.1.${i + 1}`, items, {
        "x-api-key": `${prefix}${"y".repeat(20)}${i}`,
      });
      assert.equal(r.status, 401, `client ${i}`);
    }
    // The 51st wrong key at that prefix, from a fresh client, makes the prefix wait.
    const next = await callFrom("127.0.2.1", items, { "x-api-key": `${prefix}zzzzzzzz` });
    assert.deepEqual([next.status, next.body.code, next.retryAfter], [429, 434, 1]);
    // A fresh client now gets 429 for any key of that prefix — even the right one, or a guess
    // could be told from the right key by its answer.
    const fresh = await callFrom("127.0.2.2", items, { "x-api-key": a.apiKey });
    assert.deepEqual([fresh.status, fresh.body.code], [429, 434]);
    // The owner's known client keeps working throughout.
    assert.equal((await callFrom(OWNER, items, { "x-api-key": a.apiKey })).status, 200);
    // Other keys (other prefixes) are not affected.
    const b = await h.account();
    assert.equal((await callFrom("127.0.2.3", items, { "x-api-key": b.apiKey })).status, 200);
    // Once the prefix's wait is over, the fresh client gets in with the right key.
    now += fresh.retryAfter! * 1000;
    assert.equal((await callFrom("127.0.2.2", items, { "x-api-key": a.apiKey })).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("throttle: wrong operator tokens back off per client; the right token works from another client", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const h = await startMail({ now: () => now });
  try {
    const url = `${h.base}/mailroom/requests`;
    for (let i = 0; i < 10; i++) {
      const r = await callFrom(ATTACKER, url, { authorization: `Bearer guess-${i}` });
      assert.deepEqual([r.status, r.body.code], [401, 429]);
    }
    const r = await callFrom(ATTACKER, url, { authorization: "Bearer guess-10" });
    assert.deepEqual([r.status, r.body.code, r.retryAfter], [429, 434, 1]);
    const right = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    assert.equal((await callFrom(ATTACKER, url, right)).status, 429, "not checked while waiting");
    assert.equal((await callFrom(OWNER, url, right)).status, 200);
    now += 1000;
    assert.equal((await callFrom(ATTACKER, url, right)).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("throttle: the state lives in the database and outlasts a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-throttle-" });
  const now = Date.parse("2026-01-01T00:00:00Z");
  // every answer of both runs is checked against the OpenAPI document
  const checker = new ResponseChecker();
  const run = async (fn: (base: string) => Promise<void>) => {
    const client = createClient({ url: `file:${dir}/mail.db` });
    const server = await createMailServer({
      client,
      blobDir: `${dir}/blobs`,
      operatorToken: OPERATOR_TOKEN,
      now: () => now,
    });
    const listener = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      checker.wrap((request, info) => server.fetch(request, info)),
    );
    try {
      await fn(`http://127.0.0.1:${listener.addr.port}/api/account-docs/v2`);
    } finally {
      await server.close();
      await listener.shutdown();
      client.close();
    }
  };
  try {
    await run(async (base) => {
      for (let i = 0; i < 11; i++) {
        await callFrom(ATTACKER, `${base}/items`, { "x-api-key": `gh_live_wrong${i}` });
      }
    });
    await run(async (base) => {
      const r = await callFrom(ATTACKER, `${base}/items`, { "x-api-key": "gh_live_wrong" });
      assert.deepEqual([r.status, r.body.code, r.retryAfter], [429, 434, 1]);
      assert.equal(
        (await callFrom(OWNER, `${base}/items`, { "x-api-key": "gh_live_x" })).status,
        401,
      );
    });
    checker.assertClean();
    assert.ok(checker.seen.has("GET /items 401") && checker.seen.has("GET /items 429"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("property: any x-api-key or Authorization value gets 401 or 429 with the API's error shape, never a throw", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-throttle-prop-" });
  const client = createClient({ url: `file:${dir}/mail.db` });
  let now = Date.parse("2026-01-01T00:00:00Z");
  const server = await createMailServer({
    client,
    blobDir: `${dir}/blobs`,
    operatorToken: OPERATOR_TOKEN,
    now: () => now,
    authThrottle: { clientFreeFailures: 3, credentialFreeFailures: 5 },
  });
  // every answer is checked against the OpenAPI document as well
  const checker = new ResponseChecker();
  const fetchChecked = checker.wrap((request, info) => server.fetch(request, info));
  // Header values are bytes 0x20-0x7e and tabs once the HTTP parser has them.
  const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e\t]{0,300}$/);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(headerValue, fc.constantFrom("gh_live_", "gh_test_abcd", "gh_live_abcdefghijkl")),
        fc.ipV4(),
        fc.ipV6(),
        fc.boolean(),
        fc.nat(2000),
        async (value, v4, v6, operator, advance) => {
          now += advance * 1000;
          const path = operator ? "mailroom/requests" : "items";
          const headers: Record<string, string> = operator
            ? { authorization: `Bearer ${value}` }
            : { "x-api-key": value };
          for (const hostname of [v4, v6]) {
            const res = await fetchChecked(
              new Request(`http://x/api/account-docs/v2/${path}`, { headers }),
              { remoteAddr: { hostname } } as Deno.ServeHandlerInfo,
            );
            const body = await res.json();
            assert.ok([401, 429].includes(res.status), `${res.status} ${JSON.stringify(body)}`);
            assert.equal(typeof body.code, "number");
            assert.equal(typeof body.message, "string");
            if (res.status === 429) assert.ok(Number(res.headers.get("retry-after")) >= 1);
          }
        },
      ),
      { numRuns: 150 },
    );
    checker.assertClean();
    assert.ok(checker.seen.size >= 3, [...checker.seen].join(", "));
  } finally {
    await server.close();
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("clientKey: IPv4 as is, IPv6 by its /64 in every spelling, never a throw", () => {
  assert.equal(clientKey("203.0.113.9"), "203.0.113.9");
  assert.equal(clientKey("::ffff:203.0.113.9"), "203.0.113.9");
  assert.equal(clientKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  assert.equal(clientKey("[2001:0db8:0001:0002:ffff:0:0:9]"), "2001:db8:1:2::/64");
  assert.equal(clientKey("2001:db8::1"), "2001:db8:0:0::/64");
  assert.equal(clientKey("::1"), "0:0:0:0::/64");
  assert.equal(clientKey(undefined), "unknown");
  fc.assert(
    fc.property(fc.ipV6(), fc.string(), (ip, junk) => {
      const key = clientKey(ip);
      assert.match(key, /^([0-9a-f]{1,4}:){4}:\/64$|^\d+\.\d+\.\d+\.\d+$/, `${ip} → ${key}`);
      clientKey(junk); // any text: no throw
    }),
    { numRuns: 300 },
  );
});
