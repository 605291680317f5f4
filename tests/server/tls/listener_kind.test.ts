/**
 * A reload that changes a listener's kind on the same port (plain HTTP to TLS and back): the
 * port is handed over, as in Caddy 2.6.2 (its listeners are keyed by address alone, the TLS
 * wrapper sits on top; `listen_linux.go` binds every TCP socket with SO_REUSEPORT). Here the
 * new kind's socket binds beside the old one (both SO_REUSEPORT), so the port is never
 * unbound: no client is refused, a request in flight on the old kind finishes, and the new
 * kind answers after the load. Both listener engines; Caddy 2.6.2 runs the same sequence.
 */
import assert from "node:assert/strict";
import { freePort, until } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";
import { caddyAvailable } from "../parity2/caddy.ts";

/** A self-signed certificate for localhost, in `dir`. */
async function certificate(dir: string): Promise<{ cert: string; key: string }> {
  const cert = `${dir}/localhost.crt`;
  const key = `${dir}/localhost.key`;
  const out = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "30",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return { cert, key };
}

/** An upstream whose `/slow` answers once `release()` is called: a request held in flight. */
function heldUpstream() {
  let arrived = Promise.withResolvers<void>();
  let gate = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    arrived.resolve();
    await gate.promise;
    return new Response("slow");
  });
  return {
    port: server.addr.port,
    /** Resolves when a request is held. */
    arrived: () => arrived.promise,
    release() {
      gate.resolve();
      arrived = Promise.withResolvers<void>();
      gate = Promise.withResolvers<void>();
    },
    stop: () => server.shutdown(),
  };
}

type Kind = "plain" | "tls";

function config(
  kind: Kind,
  port: number,
  upstream: number,
  c: { cert: string; key: string },
  server: Record<string, unknown>,
) {
  return {
    apps: {
      ...(kind === "tls"
        ? { tls: { certificates: { load_files: [{ certificate: c.cert, key: c.key }] } } }
        : {}),
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            routes: [
              {
                match: [{ path: ["/slow"] }],
                handle: [{
                  handler: "reverse_proxy",
                  upstreams: [{ dial: `127.0.0.1:${upstream}` }],
                }],
              },
              { handle: [{ handler: "static_response", body: "{http.request.scheme}" }] },
            ],
            automatic_https: { disable: true },
            ...(kind === "tls" ? { tls_connection_policies: [{}] } : {}),
            ...server,
          },
        },
      },
    },
  };
}

/** `curl` of `/path` in `kind` on `port`: status and body. */
async function get(kind: Kind, port: number, path: string): Promise<string> {
  const url = kind === "tls"
    ? `https://localhost:${port}${path}`
    : `http://127.0.0.1:${port}${path}`;
  const out = await new Deno.Command("curl", {
    args: ["-sk", "--resolve", `localhost:${port}:127.0.0.1`, "-w", " %{http_code}", url],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** Connects to `port` over and over until stopped; counts the refused connections. */
function connectLoop(port: number) {
  let stop = false;
  let refused = 0;
  let connected = 0;
  const done = (async () => {
    while (!stop) {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        connected++;
      } catch (e) {
        if (e instanceof Deno.errors.ConnectionRefused) refused++;
      }
      await new Promise((r) => setTimeout(r, 2)); // pacing, not a wait for an event
    }
  })();
  return async () => {
    stop = true;
    await done;
    return { refused, connected };
  };
}

/**
 * Plain, then TLS on the same port with a plain request in flight, then plain again with a
 * TLS request in flight; what the clients got at each step.
 */
async function sequence(
  load: (body: unknown) => Promise<number>,
  port: number,
  server: Record<string, unknown>,
  c: { cert: string; key: string },
): Promise<string[]> {
  const upstream = heldUpstream();
  const out: string[] = [];
  try {
    out.push(`load plain ${await load(config("plain", port, upstream.port, c, server))}`);
    out.push(await get("plain", port, "/"));
    const stopLoop = connectLoop(port);
    // plain -> TLS, a plain request held in flight
    let held = get("plain", port, "/slow");
    await upstream.arrived();
    out.push(`load tls ${await load(config("tls", port, upstream.port, c, server))}`);
    upstream.release();
    out.push(`in flight: ${await held}`);
    out.push(await get("tls", port, "/"));
    // TLS -> plain, a TLS request held in flight
    held = get("tls", port, "/slow");
    await upstream.arrived();
    out.push(`load plain ${await load(config("plain", port, upstream.port, c, server))}`);
    upstream.release();
    out.push(`in flight: ${await held}`);
    out.push(await get("plain", port, "/"));
    const { refused, connected } = await stopLoop();
    assert.ok(connected > 0);
    out.push(`refused ${refused}`);
  } finally {
    upstream.release(); // a failed step leaves no request held
    await upstream.stop();
  }
  return out;
}

const EXPECTED = [
  "load plain 200",
  "http 200",
  "load tls 200",
  "in flight: slow 200",
  "https 200",
  "load plain 200",
  "in flight: slow 200",
  "http 200",
  "refused 0",
];

for (const engine of ["deno", "node"]) {
  Deno.test(`a reload switches a port between plain HTTP and TLS (${engine} engine)`, async () => {
    const port = freePort();
    const s = await serve({ logging: QUIET }, ["--workers", "1"]);
    const c = await certificate(s.dir);
    const load = async (body: unknown) => {
      const r = await fetch(`${s.base}/load`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ logging: QUIET, ...body as Record<string, unknown> }),
      });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      return r.status;
    };
    try {
      await up(s.base);
      assert.deepEqual(await sequence(load, port, { listener_engine: engine }, c), EXPECTED);
    } finally {
      s.p.child.kill("SIGTERM");
      await finish(s.p, s.dir);
    }
  });
}

Deno.test({
  name: "Caddy 2.6.2 switches a port between plain HTTP and TLS on reload",
  ignore: !caddyAvailable(),
  async fn() {
    const [port, admin] = [freePort(), freePort()];
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-caddy-" });
    const adminConfig = { admin: { listen: `127.0.0.1:${admin}` } };
    await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(adminConfig));
    const child = new Deno.Command("caddy", {
      args: ["run", "--config", `${dir}/caddy.json`],
      stdout: "null",
      stderr: "null",
      env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
    }).spawn();
    const load = async (body: unknown) => {
      const r = await fetch(`http://127.0.0.1:${admin}/load`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          ...adminConfig,
          storage: { module: "file_system", root: `${dir}/data` },
          ...body as Record<string, unknown>,
        }),
      });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      return r.status;
    };
    try {
      await until(async () => (await fetch(`http://127.0.0.1:${admin}/config/`)).ok, 15_000);
      const c = await certificate(dir);
      assert.deepEqual(await sequence(load, port, {}, c), EXPECTED);
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
