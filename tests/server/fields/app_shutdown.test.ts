/**
 * The `http` app's `shutdown_delay` and `grace_period` when a server stops: during the delay
 * the listener keeps serving (new connections too) with `{http.shutting_down}` and
 * `{http.time_until_shutdown}` set; then the grace period bounds the wait for requests still
 * running. A reload that keeps the listener does not wait.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";

Deno.test("fields: shutdown_delay keeps serving with the shutdown placeholders, grace_period bounds the drain", async () => {
  let slowDone = false;
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await new Promise((r) => setTimeout(r, 4000));
    slowDone = true;
    return new Response("late");
  });
  const up = `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}`;
  const port = freePort();
  const http = (delay: string) => ({
    shutdown_delay: delay,
    grace_period: "300ms",
    servers: {
      srv0: {
        listen: [`127.0.0.1:${port}`],
        automatic_https: { disable: true },
        routes: [
          {
            match: [{ path: ["/slow"] }],
            handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up }] }],
          },
          {
            handle: [{
              handler: "static_response",
              body: "{http.shutting_down} {http.time_until_shutdown}",
            }],
          },
        ],
      },
    },
  });
  const config = (delay: string) => ({
    admin: { disabled: true },
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: { http: http(delay) },
  });
  const srv = await startServer({ config: config("60s") });
  const url = `http://127.0.0.1:${port}/`;
  try {
    assert.equal(await (await fetch(url)).text(), "false ");
    // a reload keeps the listener: the old config's 60s delay does not apply
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reloaded = await Promise.race([
      srv.load(config("800ms")).then(() => true),
      new Promise<boolean>((r) => timer = setTimeout(() => r(false), 20_000)),
    ]);
    clearTimeout(timer);
    assert.ok(reloaded, "the reload did not wait for the delay");
    assert.equal(await (await fetch(url)).text(), "false ");

    const slow = fetch(`${url}slow`).then((r) => r.text()).catch(() => "cut");
    await new Promise((r) => setTimeout(r, 100)); // the slow request is running
    let stopped = false;
    const stopping = srv.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 100));
    const during = await (await fetch(url, { headers: { connection: "close" } })).text();
    assert.match(during, /^true \d+(\.\d+)?(ms|s)$/, "still served, with the placeholders");
    assert.equal(stopped, false, "stop waits out the delay");
    await stopping;
    assert.equal(slowDone, false, "the grace period ended the wait before the slow request");
    await assert.rejects(fetch(url), "the listener is closed");
    await slow;
  } finally {
    await srv.stop().catch(() => {});
    await upstream.shutdown();
  }
});
