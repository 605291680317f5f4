/**
 * `lb_retry_match` on the upstream's answer, as current Caddy (caddyserver/caddy#7569,
 * v2.11.3; `reverseproxy.go`): sets with an `expression` matcher are looked at once an
 * upstream answered (`{http.reverse_proxy.status_code}`, `.header.*`) and a match tries the
 * next upstream, whatever the method; with no try left the answer's status is the error's;
 * sets without an expression never retry an answer; after a failure past the dial,
 * `{http.reverse_proxy.is_transport_error}` is true while the sets are looked at. Caddy 2.6.2
 * has none of this. caddytest's TestReverseProxyRetryMatch* run the Caddyfile forms
 * (tests/server/parity/caddytest).
 */
import assert from "node:assert/strict";
import { serve } from "./harness.ts";
import { raw } from "./raw.ts";

/** An upstream answering `status` with `name` (counted). */
function upstream(status: number, name: string, headers: Record<string, string> = {}) {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hits.push(req.method);
    return new Response(status === 204 ? null : name, { status, headers });
  });
  return {
    dial: `127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    hits,
    close: () => server.shutdown(),
  };
}

/** An upstream that reads the request head and closes without an answer. */
function closing() {
  const hits: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(4096);
        let text = "";
        while (!text.includes("\r\n\r\n")) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          text += new TextDecoder().decode(buf.subarray(0, n));
        }
        hits.push(text.split(" ")[0]);
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    hits,
    close: () => Promise.resolve(listener.close()),
  };
}

/** A route proxying `path` to `first` then `second` (round_robin starts at the second). */
function route(path: string, first: string, second: string, retryMatch: unknown[]) {
  return {
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: second }, { dial: first }],
      load_balancing: {
        selection_policy: { policy: "round_robin" },
        retries: 1,
        retry_match: retryMatch,
      },
    }],
    terminal: true,
  };
}

Deno.test("lb_retry_match: an answer matched by an expression goes to the next upstream, as current Caddy", async () => {
  const busy = upstream(503, "busy", { "x-retry": "yes" });
  const busy2 = upstream(503, "busy too");
  const good = upstream(200, "good");
  const broken = closing();
  const status = [{ expression: "{http.reverse_proxy.status_code} in [502, 503]" }];
  const srv = await serve([
    route("/status", busy.dial, good.dial, status),
    route("/header", busy.dial, good.dial, [{
      expression: '{http.reverse_proxy.header.X-Retry} == "yes"',
    }]),
    route("/exhausted", busy.dial, busy2.dial, status),
    route("/request-only", busy.dial, good.dial, [{ method: ["GET", "POST"] }]),
    route("/transport", broken.dial, good.dial, [{
      expression: "{http.reverse_proxy.is_transport_error}",
    }]),
    route("/no-transport", broken.dial, good.dial, [{
      expression: "{http.reverse_proxy.status_code} == 503",
    }]),
  ]);
  try {
    const ask = async (method: string, path: string) => {
      const r = await raw(
        srv.url(),
        method,
        path,
        method === "POST" ? { "content-length": "0" } : {},
      );
      return `${r.status} ${r.text}`;
    };
    // the answer matched: the next upstream's answer, for a POST too (the upstream answered)
    assert.equal(await ask("GET", "/status"), "200 good");
    assert.equal(await ask("POST", "/status"), "200 good");
    assert.equal(await ask("GET", "/header"), "200 good");
    // no try left: the answer's status, without its body (the error handler answers)
    assert.equal(await ask("GET", "/exhausted"), "503 ");
    // a set without an expression never retries an answer
    assert.equal(await ask("GET", "/request-only"), "503 busy");
    // after a failure past the dial the flag is true while the sets are looked at
    assert.equal(await ask("POST", "/transport"), "200 good");
    assert.equal(await ask("POST", "/no-transport"), "502 ");
    assert.deepEqual(busy2.hits, ["GET"]);
    assert.equal(broken.hits.length, 2);
  } finally {
    await srv.stop();
    for (const u of [busy, busy2, good, broken]) await u.close();
  }
});
