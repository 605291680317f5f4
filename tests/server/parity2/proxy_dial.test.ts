/**
 * Upstream dial addresses as Caddy 2.6.2 (the oracle) takes them:
 *
 * - a `tcp/`, `tcp4/` or `tcp6/` network before `host:port` (`reverse_proxy tcp/localhost:P`):
 *   dialed on that network (`tcp6/` with an IPv4 address cannot connect: 502), and
 *   `{http.reverse_proxy.upstream.hostport}` is the address without it; another network
 *   (`udp/`) is refused at load;
 * - active health checks of a `unix//path` upstream go over its socket, with `Host:
 *   localhost` (Caddy's `healthchecks.go`: "use a fake Host value instead").
 */
import assert from "node:assert/strict";
import { serve } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyAvailable, startCaddy } from "./caddy.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";

function upstream() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => new Response(`up ${req.headers.get("x-hostport")}`),
  );
  const port = (server.addr as Deno.NetAddr).port;
  return { port, close: () => server.shutdown() };
}

function dialRoutes(port: number) {
  const rp = (path: string, dial: string) => ({
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial }],
      headers: { request: { set: { "X-Hostport": ["{http.reverse_proxy.upstream.hostport}"] } } },
    }],
    terminal: true,
  });
  return [
    rp("/tcp", `tcp/localhost:${port}`),
    rp("/tcp4", `tcp4/localhost:${port}`),
    rp("/tcp4-ip", `tcp4/127.0.0.1:${port}`),
    rp("/tcp6-ip", `tcp6/127.0.0.1:${port}`),
  ];
}

async function answers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of ["/tcp", "/tcp4", "/tcp4-ip", "/tcp6-ip"]) {
    const r = await raw(base, "GET", p);
    out.push(r.status === 200 ? `${r.status} ${r.text}` : String(r.status));
  }
  return out;
}

Deno.test("reverse_proxy: tcp/, tcp4/ and tcp6/ dial networks, as Caddy", async () => {
  const up = upstream();
  const srv = await serve(dialRoutes(up.port));
  try {
    const ours = await answers(srv.url());
    assert.deepEqual(ours, [
      `200 up localhost:${up.port}`,
      `200 up localhost:${up.port}`,
      `200 up 127.0.0.1:${up.port}`,
      "502",
    ]);
    if (caddyAvailable()) {
      const caddy = await startCaddy(dialRoutes(up.port));
      try {
        assert.deepEqual(ours, await answers(caddy.url), "as Caddy 2.6.2");
      } finally {
        await caddy.stop();
      }
    }
  } finally {
    await srv.stop();
    await up.close();
  }
  await assert.rejects(
    () =>
      validateConfig({
        apps: {
          http: {
            servers: {
              s: {
                listen: ["127.0.0.1:0"],
                routes: [{
                  handle: [{ handler: "reverse_proxy", upstreams: [{ dial: "udp/x:1" }] }],
                }],
              },
            },
          },
        },
      }),
    /upstream "udp\/x:1": network udp is not supported \(tcp, tcp4, tcp6, unix\)/,
  );
});

/** An upstream on a unix socket whose `/health` answers as `healthy` says, noting the Host. */
async function unixUpstream() {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-unix-up-" });
  const path = `${dir}/up.sock`;
  const state = { healthy: false, hosts: new Set<string>(), checked: 0 };
  const waiters: (() => void)[] = [];
  const server = Deno.serve({ transport: "unix", path, onListen() {} }, (req) => {
    if (new URL(req.url).pathname === "/health") {
      state.hosts.add(req.headers.get("host") ?? "");
      state.checked++;
      waiters.splice(0).forEach((w) => w());
      return new Response(null, { status: state.healthy ? 200 : 503 });
    }
    return new Response("over the socket");
  });
  return {
    dial: `unix/${path}`,
    state,
    /** Resolves after the next health check the upstream answers (fails after 10s without). */
    nextCheck: () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      return Promise.race([
        new Promise<void>((r) => waiters.push(r)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("no health check reached the socket")), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
    },
    async close() {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const healthRoute = (dial: string) => [{
  handle: [{
    handler: "reverse_proxy",
    upstreams: [{ dial }],
    health_checks: { active: { uri: "/health", interval: "100ms", timeout: "2s" } },
  }],
}];

/** The proxy's answer after a health check saw `healthy`. */
async function afterCheck(
  up: Awaited<ReturnType<typeof unixUpstream>>,
  base: string,
  healthy: boolean,
): Promise<number> {
  up.state.healthy = healthy;
  // two checks: the first may have been under way when the state changed
  await up.nextCheck();
  await up.nextCheck();
  return (await raw(base, "GET", "/")).status;
}

Deno.test("reverse_proxy: active health checks of a unix socket upstream, with Host localhost", async () => {
  const up = await unixUpstream();
  const srv = await serve(healthRoute(up.dial));
  try {
    assert.equal(await afterCheck(up, srv.url(), false), 503, "checked and found down");
    assert.equal(await afterCheck(up, srv.url(), true), 200, "checked over the socket: up again");
    assert.equal((await raw(srv.url(), "GET", "/")).text, "over the socket");
    assert.deepEqual([...up.state.hosts], ["localhost"]);
  } finally {
    await srv.stop();
  }
  if (caddyAvailable()) {
    up.state.hosts.clear();
    const caddy = await startCaddy(healthRoute(up.dial));
    try {
      assert.equal(await afterCheck(up, caddy.url, false), 503, "Caddy 2.6.2: down");
      assert.equal(await afterCheck(up, caddy.url, true), 200, "Caddy 2.6.2: up again");
      assert.deepEqual([...up.state.hosts], ["localhost"], "Caddy 2.6.2's Host");
    } finally {
      await caddy.stop();
    }
  }
  await up.close();
  await assert.rejects(
    () =>
      validateConfig({
        apps: {
          http: {
            servers: {
              s: {
                listen: ["127.0.0.1:0"],
                routes: [{
                  handle: [{
                    handler: "reverse_proxy",
                    upstreams: [{ dial: "unix//tmp/x.sock" }],
                    health_checks: { active: { uri: "/health", port: 8080 } },
                  }],
                }],
              },
            },
          },
        },
      }),
    /health_checks\.active\.port: upstream unix\/\/tmp\/x\.sock is a unix socket, which has no port to check/,
  );
});
