/**
 * The console's admin API client: a timeout is said with the time it really waited (10 seconds
 * for a request, 60 for a `/load`), and a config change without an Etag is never sent.
 */
import assert from "node:assert/strict";
import { ADMIN_TIMEOUT_MS, AdminApi, LOAD_TIMEOUT_MS } from "../../../app/console/admin_api.ts";

Deno.test("admin API client: a timeout names the wait of that request", async () => {
  // An endpoint that never answers within the time: the request's own signal fires.
  const waits: number[] = [];
  const silent: typeof fetch = (_input, init) =>
    new Promise((_resolve, reject) => {
      const signal = init?.signal as AbortSignal;
      const started = Date.now();
      signal.addEventListener("abort", () => {
        waits.push(Date.now() - started);
        reject(signal.reason);
      });
    });
  const api = new AdminApi("127.0.0.1:2019", silent);
  const quick = await api.call("GET", "/config/", { timeoutMs: 50 });
  assert.equal(quick.status, 0);
  assert.match(quick.error ?? "", /did not answer within 50 milliseconds/);
  assert.equal(waits.length, 1);

  // The defaults, told apart without waiting for them: an endpoint that reports a timeout at
  // once, and the request's timeout read from the message.
  const timedOut: typeof fetch = () =>
    Promise.reject(new DOMException("timed out", "TimeoutError"));
  const fast = new AdminApi("127.0.0.1:2019", timedOut);
  assert.equal(ADMIN_TIMEOUT_MS, 10_000);
  assert.equal(LOAD_TIMEOUT_MS, 60_000);
  assert.match((await fast.getConfig("")).error ?? "", /did not answer within 10 seconds/);
  assert.match((await fast.load("{}")).error ?? "", /did not answer within 60 seconds/);
  assert.match((await fast.adapt("x", "text/caddyfile")).error ?? "", /within 10 seconds/);
  const down = new AdminApi("127.0.0.1:2019", () => Promise.reject(new TypeError("refused")));
  assert.match((await down.getConfig("")).error ?? "", /nothing answered there/);
});

Deno.test("admin API client: a config change without an Etag is refused, nothing sent", async () => {
  const sent: { method: string; ifMatch: string | null }[] = [];
  const endpoint: typeof fetch = (_input, init) => {
    const headers = new Headers(init?.headers);
    sent.push({ method: init?.method ?? "GET", ifMatch: headers.get("if-match") });
    return Promise.resolve(new Response("{}", { headers: { etag: '"e1"' } }));
  };
  const api = new AdminApi("127.0.0.1:2019", endpoint);
  for (const etag of ["", "   "]) {
    const r = await api.patchConfig("apps/http", "{}", etag);
    assert.equal(r.status, 0);
    assert.match(r.error ?? "", /No version \(Etag\) of the node was given, so nothing was sent/);
  }
  assert.deepEqual(sent, []);
  const ok = await api.patchConfig("apps/http", "{}", '"e1"');
  assert.equal(ok.error, null);
  assert.deepEqual(sent, [{ method: "PATCH", ifMatch: '"e1"' }]);
});
