/**
 * `fd/N` listen addresses: a listening socket the process inherited (systemd socket
 * activation, a supervisor) is served on the deno listener engine (node:net adopts it, Deno's
 * HTTP server serves each connection it accepts), the node engine when asked. The
 * parent here is a real one: a Python process binds and listens on a loopback port, then
 * executes `gatehouse run` with the socket open as a descriptor whose number only the config's
 * `{env.*}` placeholder knows. A reload that keeps the address keeps the socket. `fdgram/`
 * (UDP, HTTP/3) on a server without TLS and `listener_engine: "deno"` with wrappers on `fd/`
 * are refused by name.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON, freePort, tempEnv, until } from "../fixtures/helpers.ts";
import { up } from "../fixtures/process.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";

/** Binds 127.0.0.1:0, prints the port, and becomes the given command with the socket open. */
const PARENT = `
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
s.listen(64)
port = s.getsockname()[1]
fd = os.dup(s.fileno())
os.set_inheritable(fd, True)
s.close()
os.environ["GATEHOUSE_TEST_FD"] = str(fd)
print("port", port, flush=True)
os.execvp(sys.argv[1], sys.argv[1:])
`;

const site = (adminPort: number, body: string) => ({
  admin: { listen: `127.0.0.1:${adminPort}` },
  logging: { logs: { default: { level: "ERROR" } } },
  apps: {
    http: {
      servers: {
        inherited: {
          listen: ["fd/{env.GATEHOUSE_TEST_FD}"],
          routes: [{ handle: [{ handler: "static_response", body }] }],
        },
      },
    },
  },
});

Deno.test("fd/ listener: an inherited socket is served, and kept across a reload", async () => {
  const t = await tempEnv();
  const adminPort = freePort();
  const file = `${t.dir}/config.json`;
  await Deno.writeTextFile(file, JSON.stringify(site(adminPort, "first config")));
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      PARENT,
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      DENO_JSON,
      CLI,
      "run",
      "-c",
      file,
    ],
    env: t.env,
    cwd: t.dir,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const dec = new TextDecoder();
  let portSeen!: (p: number) => void;
  const port = new Promise<number>((r) => (portSeen = r));
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const c of s) {
      out += dec.decode(c);
      const m = /^port (\d+)$/m.exec(out);
      if (m) portSeen(Number(m[1]));
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const base = `http://127.0.0.1:${adminPort}`;
  try {
    const p = await Promise.race([
      port,
      child.status.then((s) => {
        throw new Error(`parent exited (${s.code}) before binding: ${out}`);
      }),
    ]);
    await up(base);
    const url = `http://127.0.0.1:${p}/`;
    const get = async () => {
      const r = await fetch(url);
      return { status: r.status, body: await r.text() };
    };
    assert.deepEqual(await get(), { status: 200, body: "first config" });
    // the listener is the inherited socket: the config never named its port
    const listeners = await (await fetch(`${base}/config/apps/http/servers/inherited/listen`))
      .json();
    assert.deepEqual(listeners, ["fd/{env.GATEHOUSE_TEST_FD}"]);

    // a reload with the same address keeps the socket (the descriptor is not adopted twice)
    const load = await fetch(`${base}/load`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(site(adminPort, "second config")),
    });
    assert.equal(load.status, 200, await load.text());
    await until(async () => (await get()).body === "second config", 10000, "the new config");
    assert.deepEqual(await get(), { status: 200, body: "second config" });
  } finally {
    await fetch(`${base}/stop`, { method: "POST" }).then((r) => r.body?.cancel(), () => {});
    const timer = setTimeout(() => child.kill("SIGKILL"), 10000);
    await drained;
    await child.status;
    clearTimeout(timer);
    await Deno.remove(t.dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("fd/ listener: fdgram/ without TLS, a bad descriptor and wrappers on the deno engine are refused by name", async () => {
  const cfg = (listen: string, extra: Record<string, unknown> = {}) => ({
    admin: { disabled: true },
    apps: { http: { servers: { s: { listen: [listen], routes: [], ...extra } } } },
  });
  await validateConfig(cfg("fd/3"));
  await validateConfig(cfg("fd/3", { listener_engine: "node" }));
  // an inherited UDP socket serves HTTP/3, which needs TLS (listeners/h3/server.test.ts)
  await assert.rejects(
    validateConfig(cfg("fdgram/4")),
    /listen address fdgram\/4: an inherited UDP socket serves HTTP\/3, which needs TLS/,
  );
  await assert.rejects(
    validateConfig(cfg("fd/three")),
    /listen address fd\/three: fd\/ takes the number of an inherited listening socket, got "three"/,
  );
  await assert.rejects(
    validateConfig(cfg("fd/{env.GATEHOUSE_UNSET_FD}", { listen: ["fd/", "fdgram/5"] })),
    /listen address fd\/: fd\/ takes the number of an inherited listening socket, got ""/,
  );
  // the deno engine serves an inherited socket, but not with wrappers (nor TLS) on it
  await validateConfig(cfg("fd/3", { listener_engine: "deno" }));
  await assert.rejects(
    validateConfig(
      cfg("fd/3", { listener_engine: "deno", listener_wrappers: [{ wrapper: "proxy_protocol" }] }),
    ),
    /listener_engine: "deno" cannot run TLS or listener wrappers on an inherited socket/,
  );
  // h2c too
  await validateConfig(cfg("fd/3", { listen_protocols: [["h1", "h2c"]] }));
});
