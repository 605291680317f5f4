/**
 * `deno task mail:listen` and `deno task mail:replay` as real processes, between a real mail
 * server and a real local receiver that checks every signature with `verifyWebhook`.
 */
import assert from "node:assert/strict";
import { verifyWebhook } from "../../mail.ts";
import { OPERATOR_TOKEN, startMail } from "./_harness.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Received {
  headers: Headers;
  body: string;
}

/** The local app: records every request, answers 204. */
function receiver() {
  const got: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    got.push({ headers: req.headers, body: await req.text() });
    for (const w of waiters.splice(0)) w();
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hooks`,
    got,
    async next(count: number): Promise<void> {
      while (got.length < count) await new Promise<void>((r) => waiters.push(r));
    },
    close: () => server.shutdown(),
  };
}

/** Runs a task until `ready` matches its output (or it exits). */
function task(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", ...args],
    cwd: ROOT,
    env: { MAIL_OPERATOR_TOKEN: OPERATOR_TOKEN, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  return {
    output: () => out,
    async until(re: RegExp): Promise<RegExpMatchArray> {
      for (let i = 0; i < 600; i++) {
        const m = out.match(re);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${re} in:\n${out}`);
    },
    async done(): Promise<number> {
      const { code } = await child.status;
      await pumps;
      return code;
    },
    async stop(signal: Deno.Signal = "SIGTERM"): Promise<number> {
      try {
        child.kill(signal);
      } catch { /* exited */ }
      const { code } = await child.status;
      await pumps;
      return code;
    },
  };
}

Deno.test("mail:listen registers a webhook, forwards verified deliveries, refuses forged ones; mail:replay resends a past one", async () => {
  const h = await startMail();
  const app = receiver();
  const listen = task([
    "mail:listen",
    "--api",
    h.base,
    "--account",
    "99999",
    "--forward-to",
    app.url,
  ]);
  try {
    // an unknown account is refused by the mailroom with a message naming the next step
    assert.equal(await listen.done(), 1);
    assert.match(
      listen.output(),
      /registering the webhook failed: No account 99999: list accounts with GET \/mailroom\/accounts/,
    );

    const a = await h.account();
    const run = task([
      "mail:listen",
      "--api",
      h.base,
      "--account",
      a.accountId,
      "--forward-to",
      app.url,
    ]);
    try {
      const [, secret] = await run.until(/secret:\s+(whsec_\S+)/);
      const [, port] = await run.until(/Listening on http:\/\/127\.0\.0\.1:(\d+)\//);

      // a real event reaches the local app through the listener, verifiable with the secret
      const mailId = await h.receive(a.addressIds[0], "Forwarded Sender");
      await app.next(1);
      const first = app.got[0];
      assert.equal(await verifyWebhook({ secret, headers: first.headers, body: first.body }), true);
      assert.equal(JSON.parse(first.body).data.mail_id, mailId);
      assert.equal(first.headers.get("x-gatehouse-event"), "item.received");
      await h.server.idle();
      const detail = await h.ops.getAccount(a.accountId);
      const [log] = await h.ops.listDeliveries(detail.webhooks[0].webhook_id);
      assert.equal(log.state, "delivered");
      assert.equal(log.attempts[0].status_code, 204); // the local app's answer, passed back
      await run.until(
        new RegExp(`✓ delivery ${log.delivery_id} \\(item.received\\): signature ok`),
      );

      // a forged delivery is refused and not forwarded
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gatehouse-event": "item.received",
          "x-gatehouse-delivery": "999",
          "x-gatehouse-timestamp": String(Math.floor(Date.now() / 1000)),
          "x-gatehouse-signature": "v1=" + "0".repeat(64),
        },
        body: first.body,
      });
      assert.equal(forged.status, 401);
      await forged.body?.cancel();
      await run.until(/✗ delivery 999 \(item\.received\): signature check failed/);
      assert.equal(app.got.length, 1);

      // replay the delivery: same body, fresh signature, checked by the local app
      const replay = task([
        "mail:replay",
        log.delivery_id,
        "--api",
        h.base,
        "--secret",
        secret,
        "--forward-to",
        app.url,
      ]);
      assert.equal(await replay.done(), 0, replay.output());
      assert.match(
        replay.output(),
        /✓ delivery \d+ \(item\.received\): signature ok, forwarded → 204/,
      );
      assert.equal(app.got.length, 2);
      const again = app.got[1];
      assert.equal(again.body, first.body);
      assert.equal(again.headers.get("x-gatehouse-replay"), "1");
      assert.equal(again.headers.get("x-gatehouse-delivery"), log.delivery_id);
      assert.equal(await verifyWebhook({ secret, headers: again.headers, body: again.body }), true);

      // with the wrong secret nothing is sent
      const wrong = task([
        "mail:replay",
        log.delivery_id,
        "--api",
        h.base,
        "--secret",
        "whsec_not_the_secret",
        "--forward-to",
        app.url,
      ]);
      assert.equal(await wrong.done(), 1);
      assert.match(wrong.output(), /signature does not match the secret given/);
      assert.equal(app.got.length, 2);

      // stopped (SIGTERM), the listener deactivates the webhook it registered: a later event
      // is delivered to nobody
      const hookId = detail.webhooks[0].webhook_id;
      assert.equal(await run.stop("SIGTERM"), 0, run.output());
      assert.match(run.output(), new RegExp(`Deactivated webhook ${hookId}\\n`));
      const after = await h.ops.getAccount(a.accountId);
      assert.deepEqual(after.webhooks.map((w) => [w.webhook_id, w.active]), [[hookId, false]]);
      await h.receive(a.addressIds[0], "After the listener");
      await h.server.idle();
      assert.equal((await h.ops.listDeliveries(hookId)).length, 1, "no new delivery");
    } finally {
      await run.stop();
    }

    // Ctrl-C (SIGINT) deactivates it too
    const interrupted = task([
      "mail:listen",
      "--api",
      h.base,
      "--account",
      a.accountId,
      "--forward-to",
      app.url,
    ]);
    try {
      const [, id] = await interrupted.until(/Registered webhook (\d+) /);
      await interrupted.until(/Listening on /);
      const live = await h.ops.getAccount(a.accountId);
      assert.equal(live.webhooks.find((w) => w.webhook_id === id)?.active, true);
      assert.equal(await interrupted.stop("SIGINT"), 0, interrupted.output());
      const gone = await h.ops.getAccount(a.accountId);
      assert.equal(gone.webhooks.find((w) => w.webhook_id === id)?.active, false);
    } finally {
      await interrupted.stop();
    }
  } finally {
    await listen.stop();
    await app.close();
    await h.close();
  }
});

Deno.test("mail:listen --secret: a webhook registered by hand, forwarded when its signature checks, refused otherwise, and left registered", async () => {
  const h = await startMail();
  const app = receiver();
  // the listener's port is chosen first, so the webhook can be registered with its URL
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const a = await h.account();
  const hook = await h.ops.registerWebhook(a.accountId, `http://127.0.0.1:${port}/`, [
    "item.received",
  ]);
  const run = task([
    "mail:listen",
    "--api",
    h.base,
    "--secret",
    hook.secret,
    "--port",
    String(port),
    "--forward-to",
    app.url,
  ]);
  try {
    await run.until(new RegExp(`Listening on http://127\\.0\\.0\\.1:${port}/`));
    assert.doesNotMatch(run.output(), /Registered webhook/);
    const mailId = await h.receive(a.addressIds[0], "Hand-registered");
    await app.next(1);
    const [got] = app.got;
    assert.equal(JSON.parse(got.body).data.mail_id, mailId);
    assert.equal(
      await verifyWebhook({ secret: hook.secret, headers: got.headers, body: got.body }),
      true,
    );
    await h.server.idle();
    const [log] = await h.ops.listDeliveries(hook.webhook_id);
    assert.deepEqual([log.state, log.attempts[0].status_code], ["delivered", 204]);
    await run.until(new RegExp(`✓ delivery ${log.delivery_id} \\(item.received\\)`));

    // a delivery signed with another secret is refused (401) and not forwarded
    const other = await h.ops.registerWebhook(a.accountId, `http://127.0.0.1:${port}/`, [
      "rule.changed",
    ]);
    await a.client.updateSystemRule("auto_scan", 1);
    await h.server.idle();
    const [refused] = await h.ops.listDeliveries(other.webhook_id);
    assert.equal(refused.attempts[0].status_code, 401);
    await run.until(/✗ delivery \d+ \(rule\.changed\): signature check failed/);
    assert.equal(app.got.length, 1);

    // stopping leaves the hand-registered webhook as it was
    assert.equal(await run.stop("SIGINT"), 0, run.output());
    assert.doesNotMatch(run.output(), /Deactivated/);
    const detail = await h.ops.getAccount(a.accountId);
    assert.equal(detail.webhooks.find((w) => w.webhook_id === hook.webhook_id)?.active, true);
  } finally {
    await run.stop();
    await app.close();
    await h.close();
  }
});
