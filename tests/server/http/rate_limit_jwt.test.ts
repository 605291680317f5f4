/**
 * `rate_limit` keyed by a JWT claim, the way a Caddyfile does it (caddy-ratelimit's README:
 * a zone's `key` is any placeholder): `forward_auth` asks an authentication service, which
 * verifies the token and answers with the claim in a header (`copy_headers X-User-Id`, Caddy's
 * forward_auth directive, which deletes the client's own copy of that header first), then
 * the zone is keyed `{http.request.header.X-User-Id}`; `order rate_limit after forward_auth`
 * puts the limit after the check (the plugin registers rate_limit before basic_auth, so
 * before forward_auth). Four processes: the server (the Caddyfile of docs/http.md), the
 * auth service (tests/server/fixtures/jwt_auth.ts, HS256 verified with Web Crypto), the
 * origin, and the test, which signs the tokens.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { startOrigin } from "../fixtures/origin_process.ts";

const AUTH = new URL("../fixtures/jwt_auth.ts", import.meta.url).pathname;
const SECRET = "a secret the auth service and the token issuer share";

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const part = (v: unknown) => b64url(new TextEncoder().encode(JSON.stringify(v)));

/** A JWS compact token of `claims` signed with HS256 under `secret`. */
async function sign(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const input = `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}`;
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(mac))}`;
}

/** Starts the auth service on a free port and waits until it listens. */
async function startAuth() {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", AUTH, String(port), SECRET],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("auth service exited before listening");
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  const url = `http://127.0.0.1:${port}`;
  return {
    dial: `127.0.0.1:${port}`,
    async counts(): Promise<{ accepted: number; refused: number }> {
      return await (await fetch(`${url}/_count`)).json();
    },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

Deno.test("rate_limit: keys from a JWT claim: forward_auth verifies the token and copies its sub to X-User-Id, the zone limits each user apart, a forged token never gets past the auth service", async () => {
  const origin = await startOrigin();
  const auth = await startAuth();
  const { dir, env } = await tempEnv();
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/Caddyfile`,
    `{
	admin off
	order rate_limit after forward_auth
}

http://127.0.0.1:${port} {
	forward_auth ${auth.dial} {
		uri /verify
		copy_headers X-User-Id
	}
	rate_limit {
		zone per_user {
			key    {http.request.header.X-User-Id}
			events 2
			window 1m
		}
	}
	reverse_proxy ${origin.dial}
}
`,
  );
  const proc = spawnCli(
    ["run", "--config", `${dir}/Caddyfile`, "--adapter", "caddyfile"],
    { ...env, GATEHOUSE_WORKERS: "1" },
  );
  const base = `http://127.0.0.1:${port}`;
  const as = async (token: string | null, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = { ...extra };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const r = await fetch(`${base}/api`, { headers });
    return { status: r.status, body: await r.text(), retry: r.headers.get("retry-after") };
  };
  try {
    await until(
      () => fetch(base).then(async (r) => (await r.body?.cancel(), r.status === 401)),
      30000,
      "server up",
    );
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const alice = await sign({ sub: "alice", exp });
    const bob = await sign({ sub: "bob", exp });
    assert.equal((await as(alice)).status, 200);
    assert.equal((await as(alice)).status, 200);
    const refused = await as(alice);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.retry) >= 59, `Retry-After ${refused.retry}`);
    // another sub, its own limiter
    assert.equal((await as(bob)).status, 200);
    // the origin saw the claim the auth service vouched for
    assert.equal((await origin.seen("/api"))?.["x-user-id"], "bob");
    // a client's own X-User-Id is replaced by the verified one: alice stays limited
    assert.equal((await as(alice, { "X-User-Id": "mallory" })).status, 429);
    assert.equal(await origin.count("/api"), 3);

    // a token not signed with the secret, an unsigned one, an expired one, none at all: the
    // auth service answers 401 and forward_auth passes it on; nothing reaches the zone or the
    // origin
    const forged = await sign({ sub: "carol", exp }, "another secret");
    const unsigned = `${part({ alg: "none" })}.${part({ sub: "carol" })}.`;
    const expired = await sign({ sub: "carol", exp: Math.floor(Date.now() / 1000) - 60 });
    const tampered = alice.replace(/\.[^.]+\./, `.${part({ sub: "bob", exp })}.`);
    for (const t of [forged, unsigned, expired, tampered, null]) {
      const r = await as(t, { "X-User-Id": "carol" });
      assert.equal(r.status, 401, String(t));
      assert.equal(r.body, "invalid token\n");
    }
    assert.equal(await origin.count("/api"), 3);
    // carol was never counted: her first good token passes
    assert.equal((await as(await sign({ sub: "carol", exp }))).status, 200);
    assert.equal(await origin.count("/api"), 4);
    const counts = await auth.counts();
    assert.equal(counts.accepted, 6);
    assert.ok(counts.refused >= 5, JSON.stringify(counts));
  } finally {
    proc.child.kill("SIGTERM");
    await proc.status;
    await auth.stop();
    await origin.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
