/**
 * TCP keep-alive of accepted connections (`keepalive_interval`, `keepalive_idle`,
 * `keepalive_count`) on both listener engines: the kernel reports a keep-alive timer on the
 * accepted socket (`ss`, from outside), and the socket's options read back as configured
 * (`getsockopt` on the server's own descriptor); a reload on the same socket changes them for
 * new connections; without the fields the system default (off) stays.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../lib/server/embed.ts";
import { readKeepAlive } from "../../../lib/server/listeners/keepalive.ts";
import { freePort } from "../fixtures/helpers.ts";

const ok = [{ handle: [{ handler: "static_response", body: "ok" }] }];

function config(servers: Record<string, Record<string, unknown>>) {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(servers)) {
    out[name] = { automatic_https: { disable: true }, routes: ok, ...s };
  }
  return {
    admin: { disabled: true },
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: { http: { servers: out } },
  };
}

/** Opens a kept-alive connection with one request answered; returns it and its local port. */
async function connect(port: number): Promise<{ conn: Deno.Conn; local: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  await conn.read(new Uint8Array(4096));
  return { conn, local: (conn.localAddr as Deno.NetAddr).port };
}

async function ssTimer(port: number, local: number): Promise<string> {
  const out = await new Deno.Command("ss", {
    args: ["-tnoH", "state", "established", `( sport = :${port} and dport = :${local} )`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

Deno.test("fields: keepalive_* set TCP keep-alive on accepted connections, deno and node engines", async () => {
  const ports = { deno: freePort(), node: freePort(), plain: freePort(), off: freePort() };
  const ka = { keepalive_interval: "20s", keepalive_idle: "7s", keepalive_count: 4 };
  const srv = await startServer({
    config: config({
      deno: { listen: [`127.0.0.1:${ports.deno}`], ...ka },
      node: { listen: [`127.0.0.1:${ports.node}`], idle_timeout: "1m", ...ka },
      plain: { listen: [`127.0.0.1:${ports.plain}`] },
      off: { listen: [`127.0.0.1:${ports.off}`], keepalive_interval: "-1s" },
    }),
  });
  const open: Deno.Conn[] = [];
  try {
    for (const engine of ["deno", "node"] as const) {
      const { conn, local } = await connect(ports[engine]);
      open.push(conn);
      assert.deepEqual(readKeepAlive(ports[engine], local), {
        enabled: true,
        idleS: 7,
        intervalS: 20,
        count: 4,
      }, engine);
      assert.match(await ssTimer(ports[engine], local), /timer:\(keepalive,/, engine);
    }
    for (const name of ["plain", "off"] as const) {
      const { conn, local } = await connect(ports[name]);
      open.push(conn);
      assert.equal(readKeepAlive(ports[name], local)?.enabled, false, name);
      assert.doesNotMatch(await ssTimer(ports[name], local), /keepalive/, name);
    }

    // a reload keeps the socket and gives new connections the new settings
    await srv.load(config({
      deno: { listen: [`127.0.0.1:${ports.deno}`], keepalive_interval: "30s" },
      node: { listen: [`127.0.0.1:${ports.node}`], idle_timeout: "1m" },
      plain: { listen: [`127.0.0.1:${ports.plain}`], keepalive_idle: "9s" },
      off: { listen: [`127.0.0.1:${ports.off}`], keepalive_interval: "-1s" },
    }));
    const after = async (port: number) => {
      const { conn, local } = await connect(port);
      open.push(conn);
      return readKeepAlive(port, local);
    };
    // an interval alone sets the idle time too (Caddy 2.6.2); the count defaults to 9
    assert.deepEqual(await after(ports.deno), {
      enabled: true,
      idleS: 30,
      intervalS: 30,
      count: 9,
    });
    assert.equal((await after(ports.node))?.enabled, false, "fields removed: keep-alive off");
    assert.deepEqual(await after(ports.plain), {
      enabled: true,
      idleS: 9,
      intervalS: 15,
      count: 9,
    });
  } finally {
    for (const c of open) c.close();
    await srv.stop();
  }
});
