/**
 * `reverse_proxy` load balancing as Caddy does it, with Caddy 2.6.2 as the oracle where it has
 * the feature:
 *
 * - `round_robin` counts up before it picks, so the first request goes to the second upstream
 *   (`selectionpolicies.go`, `RoundRobinSelection.Select`: `robin := atomic.AddUint32(...)`).
 *   With the bad upstream second, the first request meets it, and `lb_retry_match` decides
 *   whether a failure after connecting is retried: without it only a GET is (Caddy's
 *   `LoadBalancing.tryAgain`).
 * - `weighted_round_robin` (not in Caddy 2.6.2; current Caddy's `selectionpolicies.go`,
 *   `WeightedRoundRobinSelection.Validate`, commit 55b3397 "reverseproxy: validate on
 *   weighted_round_robin loadbalancing policy" #7807, and its Caddyfile check from #6681)
 *   refuses negative weights and weights that add up to nothing, with Caddy's messages, and
 *   picks in the same order as Caddy's counter. A `gatehouse run` process answers such a
 *   `/load` with 400 and Caddy's message, and keeps serving the config it had.
 */
import assert from "node:assert/strict";
import { serve } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyAvailable, startCaddy } from "./caddy.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { call, freePort } from "../fixtures/helpers.ts";
import { finish, QUIET, serve as serveProcess, up } from "../fixtures/process.ts";

/** An upstream answering "good" (and its name in `x-up`). */
function good(name = "good") {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(name, { headers: { "x-up": name } }),
  );
  return {
    dial: `127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    close: () => server.shutdown(),
  };
}

/** An upstream that accepts, reads the request head and closes without an answer. */
function bad() {
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
        conn.close();
      })();
    }
  })().catch(() => {});
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    close: () => listener.close(),
  };
}

function routes(goodDial: string, badDial: string) {
  const rp = (path: string, lb: Record<string, unknown>) => ({
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: goodDial }, { dial: badDial }],
      load_balancing: { selection_policy: { policy: "round_robin" }, ...lb },
    }],
    terminal: true,
  });
  return [
    rp("/matched", { retries: 1, retry_match: [{ method: ["POST"] }] }),
    rp("/unmatched", { retries: 1 }),
    rp("/get", { retries: 1 }),
    rp("/once", {}),
  ];
}

/** The statuses of the scenario's requests, in order. */
async function scenario(base: string): Promise<number[]> {
  const out: number[] = [];
  const ask = async (method: string, path: string) => {
    const r = await raw(base, method, path, method === "POST" ? { "content-length": "0" } : {});
    out.push(r.status);
  };
  await ask("POST", "/matched"); // the second (bad) upstream first; POST matches: retried
  await ask("POST", "/unmatched"); // no retry_match: a POST is not retried
  await ask("GET", "/get"); // no retry_match: a GET is
  await ask("GET", "/once"); // no retries: the second upstream's failure is the answer
  await ask("GET", "/once"); // then the first one
  return out;
}

Deno.test("round_robin starts at the second upstream; lb_retry_match with the bad upstream second", async () => {
  const g = good();
  const b = bad();
  const srv = await serve(routes(g.dial, b.dial));
  try {
    const ours = await scenario(srv.url());
    assert.deepEqual(ours, [200, 502, 200, 502, 200]);
    if (caddyAvailable()) {
      const caddy = await startCaddy(routes(g.dial, b.dial));
      try {
        assert.deepEqual(ours, await scenario(caddy.url), "as Caddy 2.6.2");
      } finally {
        await caddy.stop();
      }
    }
  } finally {
    await srv.stop();
    await g.close();
    b.close();
  }
});

Deno.test("weighted_round_robin: Caddy's order; negative and all-zero weights refused with Caddy's messages", async () => {
  const ups = [good("a"), good("b")];
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      upstreams: ups.map((u) => ({ dial: u.dial })),
      load_balancing: { selection_policy: { policy: "weighted_round_robin", weights: [3, 1] } },
    }],
  }]);
  try {
    const seen = [];
    for (let i = 0; i < 8; i++) seen.push((await raw(srv.url(), "GET", "/")).text);
    // Caddy's counter: 1, 2, 3, 0, 1, ... over the total weight 4 (a for 0-2, b for 3)
    assert.deepEqual(seen, ["a", "a", "b", "a", "a", "a", "b", "a"]);
  } finally {
    await srv.stop();
    for (const u of ups) await u.close();
  }
  const config = (weights?: unknown) => ({
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:0"],
            routes: [{
              handle: [{
                handler: "reverse_proxy",
                upstreams: [{ dial: "127.0.0.1:1" }, { dial: "127.0.0.1:2" }],
                load_balancing: {
                  selection_policy: {
                    policy: "weighted_round_robin",
                    ...(weights === undefined ? {} : { weights }),
                  },
                },
              }],
            }],
          },
        },
      },
    },
  });
  const refused = async (weights: unknown, message: RegExp) => {
    await assert.rejects(() => validateConfig(config(weights)), message);
  };
  const positive =
    /selection_policy: weighted_round_robin requires at least one upstream with a positive weight/;
  await refused([0, 0], positive);
  await refused(undefined, positive);
  await refused([-1], positive); // Caddy checks the total first
  await refused([-1, 2], /selection_policy: weight of an upstream cannot be negative/);
  await refused([1.5, 1], /weights: must be an array of whole numbers/);
  await validateConfig(config([0, 1]));
  // the Caddyfile refuses a negative weight as it reads it (Caddy's UnmarshalCaddyfile)
  assert.throws(
    () =>
      adaptGatehousefile(
        ":80 {\n\treverse_proxy 127.0.0.1:1 127.0.0.1:2 {\n\t\tlb_policy weighted_round_robin 1 -2\n\t}\n}\n",
      ),
    /invalid weight value '-2': weight should be non-negative/,
  );
});

Deno.test("weighted_round_robin: a server process refuses the negative, all-zero and missing weights at /load and keeps serving the old config", async () => {
  const port = freePort();
  const site = (handler: Record<string, unknown>) => ({
    logging: QUIET,
    apps: {
      http: { servers: { s: { listen: [`127.0.0.1:${port}`], routes: [{ handle: [handler] }] } } },
    },
  });
  const s = await serveProcess(site({ handler: "static_response", body: "old" }));
  try {
    await up(s.base);
    const siteBase = `http://127.0.0.1:${port}`;
    assert.equal((await call(siteBase, "GET", "/")).body, "old");
    const load = (weights?: unknown) =>
      call(
        s.base,
        "POST",
        "/load",
        site({
          handler: "reverse_proxy",
          upstreams: [{ dial: "127.0.0.1:1" }, { dial: "127.0.0.1:2" }],
          load_balancing: {
            selection_policy: {
              policy: "weighted_round_robin",
              ...(weights === undefined ? {} : { weights }),
            },
          },
        }),
      );
    // Caddy's `WeightedRoundRobinSelection.Validate` (55b3397a2, #7807): the total first, then
    // each weight
    const cases: [unknown, RegExp][] = [
      [[0, 0], /weighted_round_robin requires at least one upstream with a positive weight/],
      [undefined, /weighted_round_robin requires at least one upstream with a positive weight/],
      [[-1, 2], /weight of an upstream cannot be negative/],
    ];
    for (const [weights, message] of cases) {
      const r = await load(weights);
      assert.equal(r.status, 400, `weights ${JSON.stringify(weights)}: ${r.body}`);
      assert.match(JSON.parse(r.body).error, message);
      assert.equal((await call(siteBase, "GET", "/")).body, "old", "the old config still serves");
    }
  } finally {
    s.p.child.kill("SIGTERM");
    await finish(s.p, s.dir);
  }
});
