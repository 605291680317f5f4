/**
 * Distributed `rate_limit` (caddy-ratelimit's distributed.go): instances that share a storage
 * count each other's events. Two real server processes on one `file_system` storage and on
 * one `libsql` database, proxying to one origin process (whose counts show that refused
 * requests never reach it), and the state format read from a storage written by hand.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { serve } from "./harness.ts";
import { startOrigin } from "../fixtures/origin_process.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

function serverConfig(port: number, log: string, storage: J, zone: J, dial: string): J {
  return {
    admin: { disabled: true },
    storage,
    logging: {
      logs: {
        default: {
          writer: { output: "file", filename: log, roll_disabled: true },
          encoder: { format: "json" },
          level: "DEBUG",
        },
      },
    },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [{
              match: [{ path: ["/_up"] }],
              handle: [{ handler: "static_response", body: "up" }],
              terminal: true,
            }, {
              handle: [
                {
                  handler: "rate_limit",
                  rate_limits: { shared: zone },
                  distributed: { write_interval: "50ms", read_interval: "50ms" },
                },
                { handler: "reverse_proxy", upstreams: [{ dial }] },
              ],
            }],
          },
        },
      },
    },
  };
}

async function logLines(path: string): Promise<J[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** Runs two instances on `storage` and shows that the second counts the first's events. */
async function twoInstances(storage: J, stateOf: () => Promise<J | null>): Promise<void> {
  const zone = { key: "everyone", window: "1m", max_events: 4 };
  const origin = await startOrigin();
  const instances = await Promise.all([0, 1].map(async () => {
    const { dir, env } = await tempEnv();
    const port = freePort();
    const log = `${dir}/log.jsonl`;
    await Deno.writeTextFile(
      `${dir}/config.json`,
      JSON.stringify(serverConfig(port, log, storage, zone, origin.dial)),
    );
    // each instance one process, whatever GATEHOUSE_WORKERS the tests run with
    const proc = spawnCli(["run", "--config", `${dir}/config.json`], {
      ...env,
      GATEHOUSE_WORKERS: "1",
    });
    return { dir, port, log, proc, url: `http://127.0.0.1:${port}/shared` };
  }));
  const [a, b] = instances;
  const status = async (url: string) => {
    const r = await fetch(url);
    await r.body?.cancel();
    return r;
  };
  try {
    for (const i of instances) {
      const up = i.url.replace(/shared$/, "_up");
      await until(() => status(up).then((r) => r.status === 200), 30000, "server up");
    }
    // A takes the zone's 4 events (B has counted none)
    for (let n = 0; n < 4; n++) assert.equal((await status(a.url)).status, 200);
    assert.equal((await status(a.url)).status, 429);
    // A writes its counts (write_interval), then B reads them, twice to be sure it read them
    // after they were written (read_interval)
    await until(
      async () => (await stateOf())?.zones.shared?.everyone?.[0] === 4,
      10000,
      "A's state",
    );
    const written = Date.now() / 1000;
    await until(
      async () =>
        (await logLines(b.log)).filter((r) =>
          r.msg === "read distributed rate limit states" && r.ts > written && r.instances === 1
        ).length >= 2,
      10000,
      "B read A's state",
    );
    const r = await status(b.url);
    assert.equal(r.status, 429, "B refuses: A used the zone's events");
    const retry = Number(r.headers.get("retry-after"));
    assert.ok(retry >= 58 && retry <= 60, `Retry-After ${retry}`);
    // A's 4 requests went upstream; neither instance's refusals did
    assert.equal(await origin.count("/shared"), 4);
  } finally {
    for (const i of instances) {
      i.proc.child.kill("SIGTERM");
      await i.proc.status;
      await Deno.remove(i.dir, { recursive: true }).catch(() => {});
    }
    await origin.stop();
  }
}

/** The state file of the instance that counted events, read from a storage directory. */
async function stateIn(root: string): Promise<J | null> {
  try {
    for await (const e of Deno.readDir(`${root}/rate_limit/instances`)) {
      const s = JSON.parse(await Deno.readTextFile(`${root}/rate_limit/instances/${e.name}`));
      if (s.zones.shared?.everyone) return s;
    }
  } catch { /* not written yet */ }
  return null;
}

Deno.test("rate_limit distributed: two server processes on one file_system storage share counts", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-rl-fs-" });
  try {
    await twoInstances({ module: "file_system", root }, () => stateIn(root));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rate_limit distributed: two server processes on one libsql database share counts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-rl-sql-" });
  const url = `file:${dir}/storage.db`;
  try {
    const { createClient } = await import("@libsql/client");
    await twoInstances({ module: "libsql", url }, async () => {
      const db = createClient({ url });
      try {
        const rows = await db.execute(
          "SELECT value FROM gatehouse_storage WHERE key LIKE 'rate_limit/instances/%'",
        );
        for (const row of rows.rows) {
          const s = JSON.parse(new TextDecoder().decode(row.value as ArrayBuffer));
          if (s.zones.shared?.everyone) return s;
        }
      } catch {
        /* no table yet */
      } finally {
        db.close();
      }
      return null;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rate_limit distributed: other instances' state files are counted, old ones purged (purge_age)", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-rl-state-" });
  const dir = `${root}/rate_limit/instances`;
  await Deno.mkdir(dir, { recursive: true });
  const now = Date.now();
  // another instance used 2 of the 3 events of key "k"; a long-gone one used 3 an hour ago
  await Deno.writeTextFile(
    `${dir}/other.rlstate`,
    JSON.stringify({ timestamp: now, zones: { counted: { k: [2, now - 1000] } } }),
  );
  await Deno.writeTextFile(
    `${dir}/gone.rlstate`,
    JSON.stringify({ timestamp: now - 3_600_000, zones: { counted: { k: [3, now - 3_600_000] } } }),
  );
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      {
        handler: "rate_limit",
        rate_limits: { counted: { key: "k", window: "1m", max_events: 3 } },
        distributed: { purge_age: "10m" },
        storage: { module: "file_system", root },
      },
      { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
    ],
  }]);
  try {
    const status = () =>
      fetch(`${srv.url()}/counted`).then(async (r) => (await r.body?.cancel(), r));
    assert.equal((await status()).status, 200);
    const r = await status();
    assert.equal(r.status, 429);
    // the wait runs to the other instance's oldest event leaving the window
    const retry = Number(r.headers.get("retry-after"));
    assert.ok(retry >= 57 && retry <= 59, `Retry-After ${retry}`);
    await assert.rejects(Deno.stat(`${dir}/gone.rlstate`), Deno.errors.NotFound);
    assert.equal(await origin.count("/counted"), 1);
  } finally {
    await srv.stop();
    await origin.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("rate_limit distributed: the worker processes of one server are instances of their own and share counts (docs/http.md: worker n is <instance id>-worker-<n>)", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-rl-workers-" });
  const origin = await startOrigin();
  const { dir, env } = await tempEnv();
  const port = freePort();
  const log = `${dir}/log.jsonl`;
  const zone = { key: "everyone", window: "1m", max_events: 4 };
  const config = serverConfig(port, log, { module: "file_system", root }, zone, origin.dial);
  // which worker answered (each worker process has GATEHOUSE_WORKER, 1 to N)
  config.apps.http.servers.srv0.routes[1].handle.unshift({
    handler: "headers",
    response: { set: { "X-Worker": ["{env.GATEHOUSE_WORKER}"] } },
  });
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
  const proc = spawnCli(["run", "--config", `${dir}/config.json`], {
    ...env,
    GATEHOUSE_WORKERS: "2",
    GATEHOUSE_SPARE_WORKER: "0",
  });
  const base = `http://127.0.0.1:${port}`;
  /** One request on a connection of its own (the kernel spreads connections over workers). */
  const once = async () => {
    const client = Deno.createHttpClient({});
    try {
      const r = await fetch(`${base}/shared`, { client });
      await r.body?.cancel();
      return { status: r.status, worker: r.headers.get("x-worker") };
    } finally {
      client.close();
    }
  };
  const states = async (): Promise<J[]> => {
    const out: J[] = [];
    try {
      for await (const e of Deno.readDir(`${root}/rate_limit/instances`)) {
        if (!e.name.endsWith(".rlstate")) continue;
        out.push(JSON.parse(await Deno.readTextFile(`${root}/rate_limit/instances/${e.name}`)));
      }
    } catch { /* not written yet */ }
    return out;
  };
  try {
    await until(
      () => fetch(`${base}/_up`).then(async (r) => (await r.body?.cancel(), r.status === 200)),
      30000,
      "server up",
    );
    // every worker writes a state file of its own
    await until(async () => (await states()).length === 2, 20000, "a state file per worker");
    // the zone's 4 events, wherever the kernel sends the connections
    for (let n = 0; n < 4; n++) assert.equal((await once()).status, 200);
    assert.equal(await origin.count("/shared"), 4);
    // the workers wrote their counts (4 between them), then each read the other's twice
    await until(
      async () =>
        (await states()).reduce((t, s) => t + (s.zones.shared?.everyone?.[0] ?? 0), 0) === 4,
      10000,
      "the workers' counts",
    );
    const written = Date.now() / 1000;
    await until(
      async () => {
        const reads = new Map<string, number>();
        for (const r of await logLines(log)) {
          if (
            r.msg === "read distributed rate limit states" && r.ts > written && r.instances === 1
          ) reads.set(r.instance, (reads.get(r.instance) ?? 0) + 1);
        }
        return reads.size === 2 && [...reads.values()].every((n) => n >= 2);
      },
      10000,
      "each worker read the other's state",
    );
    // each worker refuses: its own count and the other's make the zone's 4
    const refusedBy = new Set<string>();
    for (let i = 0; i < 200 && refusedBy.size < 2; i++) {
      const r = await once();
      assert.equal(r.status, 429, `worker ${r.worker} refuses`);
      refusedBy.add(r.worker!);
    }
    assert.deepEqual([...refusedBy].sort(), ["1", "2"]);
    assert.equal(await origin.count("/shared"), 4);
  } finally {
    proc.child.kill("SIGTERM");
    await proc.status;
    await origin.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
});
