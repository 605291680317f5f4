/**
 * Webhooks never reach internal targets: a recording listener on loopback gets nothing from
 * any of the 14 targets of the report (and more spellings), which are refused when saved
 * (9422); a webhook saved while its target was allowed, or whose name resolves to loopback at
 * delivery (DNS rebinding, through a real DNS server on loopback), fails at delivery without a
 * request and without retries; a redirect is never followed. An allowed name is connected to
 * at the address its resolution was checked at, with its own `Host`.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { createMailServer, MailApiError, MailroomClient } from "../../mail.ts";
import { OPERATOR_TOKEN, PNG, startMail } from "./_harness.ts";
import { type DnsEntry, startDnsServer } from "../server/fixtures/dns_server.ts";

interface Hit {
  method: string;
  path: string;
  host: string | null;
}

/** A listener on 127.0.0.1 (and on ::1 at the same port when it can) recording every request. */
function recorder(answer: (req: Request) => Response = () => new Response(null, { status: 204 })) {
  const hits: Hit[] = [];
  const handle = (req: Request) => {
    const u = new URL(req.url);
    hits.push({ method: req.method, path: u.pathname, host: req.headers.get("host") });
    return answer(req);
  };
  const v4 = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
  let v6: Deno.HttpServer | null = null;
  try {
    v6 = Deno.serve({ hostname: "::1", port: v4.addr.port, onListen() {} }, handle);
  } catch { /* no IPv6 loopback here */ }
  return {
    port: v4.addr.port,
    hits,
    async close() {
      await v4.shutdown();
      await v6?.shutdown();
    },
  };
}

/** The 14 internal targets the report registered, pointed at the listener where loopback. */
function reportTargets(port: number): string[] {
  return [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://2852039166/latest/meta-data/", // 169.254.169.254 in decimal
    "http://[::ffff:a9fe:a9fe]/latest/meta-data/", // IPv4-mapped
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    `http://127.0.0.1:${port}/hook`,
    `http://localhost:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `http://0.0.0.0:${port}/hook`,
    `http://2130706433:${port}/hook`, // 127.0.0.1 in decimal
    `http://127.0.0.1:${port}/load`, // the admin endpoint's /load and /stop
    "http://172.16.0.1/",
    "http://100.64.0.1/", // carrier-grade NAT
  ];
}

/** More spellings and classes. */
function moreTargets(port: number): string[] {
  return [
    `http://0x7f.1:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://127.1:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://%31%32%37.0.0.1:${port}/`,
    `http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:${port}/`, // full-width digits
    `http://127.0.0.1.:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[0:0:0:0:0:0:0:1]:${port}/`,
    `http://[::]:${port}/`,
    `http://0:${port}/`,
    `http://LOCALHOST:${port}/`,
    `http://localhost.:${port}/`,
    `http://hooks.localhost:${port}/`,
    `https://127.0.0.1:${port}/`,
    "http://0251.0376.0251.0376/", // octal
    "http://0xa9fea9fe/", // hex
    "http://[64:ff9b::a9fe:a9fe]/", // NAT64
    "http://[2002:a9fe:a9fe::1]/", // 6to4
    "http://metadata.goog/",
    "http://metadata/",
    "http://[fd00:ec2::254]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://169.254.10.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://db.internal/",
    "http://printer.local/",
  ];
}

const refused = (what: RegExp) => (err: unknown) => {
  assert.ok(err instanceof MailApiError, String(err));
  assert.deepEqual([err.status, err.code], [422, 9422]);
  assert.match(err.message, what);
  assert.match(err.message, /allowTargets/);
  return true;
};

/** Something happens on the account: a rule change and a received item (both events). */
async function events(ops: MailroomClient, accountId: string): Promise<void> {
  await ops.setAccountRule(accountId, "auto_scan", true);
  const { user_id } = await ops.createUser(accountId, "Una");
  const { address_id } = await ops.createAddress(accountId, user_id);
  await ops.receiveItem({
    address_id,
    sender_name: "Bank",
    envelope: new Blob([PNG], { type: "image/png" }),
  });
}

Deno.test("webhook targets: the 14 internal targets of the report and 29 more spellings are refused when saved (9422); the listener gets nothing", async () => {
  const rx = recorder();
  const h = await startMail({ webhooks: { baseDelayMs: 20, maxAttempts: 2, timeoutMs: 1000 } });
  try {
    const a = await h.account();
    const targets = [...reportTargets(rx.port), ...moreTargets(rx.port)];
    assert.equal(targets.length, 14 + 29);
    for (const url of targets) {
      await assert.rejects(
        h.ops.registerWebhook(a.accountId, url),
        refused(
          /is an? (loopback|private|link-local|shared|unspecified|cloud metadata|multicast|reserved)|only resolves inside a network/,
        ),
        url,
      );
    }
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, reportTargets(rx.port)[0]),
      refused(/^169\.254\.169\.254 is a cloud metadata address\./),
    );
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, `http://localhost:${rx.port}/`),
      refused(/^localhost is a loopback address\./),
    );
    await events(h.ops, a.accountId);
    await h.server.idle();
    assert.deepEqual((await h.ops.getAccount(a.accountId)).webhooks, []);
    assert.deepEqual(rx.hits, []);
  } finally {
    await h.close();
    await rx.close();
  }
});

Deno.test("webhook targets: allowTargets lets named targets through (ports included); one saved while allowed gets nothing once the entry is removed", async () => {
  const rx = recorder();
  const other = recorder();
  const allowed = { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 1000 };
  const h = await startMail({
    webhooks: { ...allowed, allowTargets: [`127.0.0.1:${rx.port}`, "10.20.0.0/16"] },
  });
  const url = `file:${h.dir}/mail.db`;
  const client = createClient({ url });
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(a.accountId, `http://127.0.0.1:${rx.port}/hook`);
    await h.ops.registerWebhook(a.accountId, "http://10.20.3.4/hook");
    // the port is part of the entry; other internal ranges stay refused
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, `http://127.0.0.1:${other.port}/`),
      refused(/is a loopback address/),
    );
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, "http://10.21.0.1/"),
      refused(/is a private address/),
    );
    await h.server.close();

    // the same database, served again without the entry
    const server = await createMailServer({
      client,
      blobDir: `${h.dir}/blobs`,
      operatorToken: OPERATOR_TOKEN,
      rateLimit: false,
      webhooks: allowed,
    });
    const ops = new MailroomClient({
      baseUrl: h.base,
      operatorToken: OPERATOR_TOKEN,
      fetch: (input, init) => server.fetch(new Request(input, init)),
    });
    await ops.setAccountRule(a.accountId, "auto_scan", true);
    await server.idle();
    const [delivery] = await ops.listDeliveries(hook.webhook_id);
    assert.equal(delivery.state, "failed");
    assert.equal(delivery.attempts.length, 1, "a refused target is not tried again");
    assert.equal(delivery.attempts[0].status_code, null);
    assert.match(
      delivery.attempts[0].error ?? "",
      new RegExp(`^refused: 127\\.0\\.0\\.1:${rx.port} is a loopback address\\.`),
    );
    // sending it again is refused the same way
    await ops.redeliver(delivery.delivery_id);
    await server.idle();
    assert.equal((await ops.listDeliveries(hook.webhook_id))[0].state, "failed");
    await server.close();
    assert.deepEqual(rx.hits, []);
    assert.deepEqual(other.hits, []);
  } finally {
    client.close();
    await h.close();
    await rx.close();
    await other.close();
  }
});

Deno.test("webhook targets: allowTargets entries that are not addresses, ranges or names are refused when the server is made", async () => {
  for (const entry of ["", "10.0.0.0/33", "127.0.0.1:0", "127.0.0.1:99999", "[::1]:x", "a b"]) {
    await assert.rejects(
      createMailServer({
        client: createClient({ url: ":memory:" }),
        webhooks: { allowTargets: [entry] },
      }),
      (e: Error) => {
        assert.match(e.message, /^webhook allowTargets: /);
        assert.ok(e.message.includes(JSON.stringify(entry)), e.message);
        return true;
      },
      entry,
    );
  }
});

Deno.test("webhook targets: a name that resolves to loopback is refused when saved, and when it resolves there only at delivery (DNS rebinding) the listener gets nothing", async () => {
  const rx = recorder();
  // the server reads its table at each query: changing it is the rebinding
  const table: Record<string, DnsEntry> = {
    "hooks.gatehouse.test": { address: "93.184.215.14" },
    "loop.gatehouse.test": { address: "127.0.0.1" },
    "private.gatehouse.test": { address: "10.1.2.3" },
  };
  const dns = await startDnsServer(table);
  const resolve = (name: string) =>
    Deno.resolveDns(name, "A", { nameServer: { ipAddr: "127.0.0.1", port: dns.port } });
  const h = await startMail({
    webhooks: { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 1000, resolve },
  });
  try {
    const a = await h.account();
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, `http://loop.gatehouse.test:${rx.port}/hook`),
      refused(/^loop\.gatehouse\.test resolves to 127\.0\.0\.1, a loopback address\./),
    );
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, "https://private.gatehouse.test/hook"),
      refused(/resolves to 10\.1\.2\.3, a private address/),
    );
    // public when saved...
    const hook = await h.ops.registerWebhook(
      a.accountId,
      `http://hooks.gatehouse.test:${rx.port}/hook`,
    );
    // ... loopback at delivery
    table["hooks.gatehouse.test"] = { address: "127.0.0.1" };
    await events(h.ops, a.accountId);
    await h.server.idle();
    const log = await h.ops.listDeliveries(hook.webhook_id);
    assert.ok(log.length >= 2);
    for (const d of log) {
      assert.equal(d.state, "failed");
      assert.equal(d.attempts.length, 1);
      assert.match(
        d.attempts[0].error ?? "",
        /^refused: hooks\.gatehouse\.test resolves to 127\.0\.0\.1, a loopback address\./,
      );
    }
    assert.deepEqual(rx.hits, []);
  } finally {
    await h.close();
    await dns.close();
    await rx.close();
  }
});

Deno.test("webhook targets: an allowed name is connected to at the address its resolution was checked at, resolved once per attempt, with its own Host", async () => {
  const rx = recorder();
  const dns = await startDnsServer({ "pinned.gatehouse.test": { address: "127.0.0.1" } });
  const resolve = (name: string) =>
    Deno.resolveDns(name, "A", { nameServer: { ipAddr: "127.0.0.1", port: dns.port } });
  const h = await startMail({
    webhooks: { baseDelayMs: 20, timeoutMs: 2000, resolve, allowTargets: [`127.0.0.1:${rx.port}`] },
  });
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(
      a.accountId,
      `http://pinned.gatehouse.test:${rx.port}/hook?x=1`,
    );
    await events(h.ops, a.accountId);
    await h.server.idle();
    const log = await h.ops.listDeliveries(hook.webhook_id);
    assert.deepEqual(log.map((d) => [d.state, d.attempts.length]), log.map(() => ["delivered", 1]));
    assert.equal(rx.hits.length, log.length);
    for (const hit of rx.hits) {
      assert.deepEqual(hit, {
        method: "POST",
        path: "/hook",
        host: `pinned.gatehouse.test:${rx.port}`,
      });
    }
    // once when saved, then once per attempt: the connection asked nobody else
    assert.equal(
      dns.queries.filter((q) => q === "pinned.gatehouse.test").length,
      1 + log.length,
    );
  } finally {
    await h.close();
    await dns.close();
    await rx.close();
  }
});

Deno.test("webhook targets: a redirect is not followed, even to an allowed target; the attempt fails naming it", async () => {
  const target = recorder();
  const redirecting = recorder(() =>
    new Response(null, {
      status: 307,
      headers: { location: `http://127.0.0.1:${target.port}/stolen` },
    })
  );
  const h = await startMail({
    webhooks: {
      baseDelayMs: 20,
      maxAttempts: 2,
      timeoutMs: 1000,
      allowTargets: [`127.0.0.1:${redirecting.port}`, `127.0.0.1:${target.port}`],
    },
  });
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(
      a.accountId,
      `http://127.0.0.1:${redirecting.port}/hook`,
      ["rule.changed"],
    );
    await h.ops.setAccountRule(a.accountId, "auto_scan", true);
    await h.server.idle();
    const [d] = await h.ops.listDeliveries(hook.webhook_id);
    assert.equal(d.state, "failed");
    assert.deepEqual(
      d.attempts.map((t) => [t.status_code, t.error]),
      [1, 2].map(() => [
        307,
        `HTTP 307: redirects are not followed (Location: http://127.0.0.1:${target.port}/stolen)`,
      ]),
    );
    assert.equal(redirecting.hits.length, 2);
    assert.deepEqual(target.hits, []);
  } finally {
    await h.close();
    await redirecting.close();
    await target.close();
  }
});
