/**
 * The deno engine's TLS listener replaced again and again under a load of new connections:
 * `wrk` opens a new TLS connection for every request (`Connection: close`, 32 at a time) while
 * reloads swap the certificates several times a second. Every replacement hands the port over
 * (lib/server/listeners/deno/handover.ts): new connections are steered to the new listener (after
 * probes warmed its per-name certificate resolver) and the old one closes once nothing can
 * reach it any more; the connections the old one accepted are served to the end. wrk sees no
 * error at all, both with `net.ipv4.tcp_migrate_req=0` (the Linux default: a connection the
 * kernel still held for a closing listener would be reset) and with 1, and the log shows no
 * replacement fell back to closing without a handover. Run with a fixed certificate (the
 * listener holds it) and with two certificates chosen by server name (Deno's resolver). The
 * sysctl is set for the test when it can be (root) and restored after; without root the test
 * runs with the machine's setting.
 */
import assert from "node:assert/strict";
import { generateKey, makeLeaf, makeRoot } from "../../../lib/server/pki/x509.ts";
import { logEntries } from "../acme/_server.ts";
import { freePort, servedCert, tlsServer } from "./_helpers.ts";

async function leaves(names: string[], count: number) {
  const caKey = await generateKey();
  const ca = await makeRoot("Replace Load Test Root", caKey);
  const out: { certificate: string; key: string }[][] = [];
  for (let i = 0; i < count; i++) {
    const set = [];
    for (const n of names) {
      const k = await generateKey();
      set.push({
        certificate: (await makeLeaf([n], k.keys.publicKey, ca.pem, caKey)).pem,
        key: k.pem,
      });
    }
    out.push(set);
  }
  return out;
}

const MIGRATE = "/proc/sys/net/ipv4/tcp_migrate_req";

function readMigrate(): string | null {
  try {
    return Deno.readTextFileSync(MIGRATE).trim();
  } catch {
    return null;
  }
}

/** Runs `fn` with tcp_migrate_req set to `value`; null when it cannot be set. */
async function withMigrate<T>(value: "0" | "1", fn: () => Promise<T>): Promise<T | null> {
  const was = readMigrate();
  if (was === null) return null;
  if (was !== value) {
    try {
      Deno.writeTextFileSync(MIGRATE, value);
    } catch {
      return null;
    }
  }
  try {
    return await fn();
  } finally {
    if (was !== value) Deno.writeTextFileSync(MIGRATE, was);
  }
}

async function replacedUnderLoad(mode: "fixed" | "resolver") {
  // resolver: a second name with its own certificate makes the choice depend on SNI
  const names = mode === "fixed" ? ["127.0.0.1"] : ["127.0.0.1", "other.test"];
  const sets = await leaves(names, 2);
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const log = `${dir}/server.log`;
  const cfg = (pems: { certificate: string; key: string }[]) => ({
    logging: {
      logs: {
        default: {
          writer: { output: "file", filename: log },
          encoder: { format: "json" },
          level: "WARN",
        },
      },
    },
    apps: {
      tls: { certificates: { load_pem: pems } },
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [{ handle: [{ handler: "static_response", body: "steady" }] }],
          },
        },
      },
    },
  });
  const srv = await tlsServer(cfg(sets[0]));
  try {
    const wrk = new Deno.Command("wrk", {
      // stopped (SIGINT: wrk then reports) once the replacements are done, however long they take
      args: ["-t1", "-c32", "-d120s", "-H", "Connection: close", `https://127.0.0.1:${port}/`],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const serials = new Set<string>();
    let reloads = 0;
    await new Promise((r) => setTimeout(r, 500));
    while (reloads < 12) {
      assert.ok(await srv.load(cfg(sets[++reloads % 2])));
      await new Promise((r) => setTimeout(r, 30));
      const c = await servedCert(port, "127.0.0.1");
      if (c) serials.add(c.serial);
    }
    await new Promise((r) => setTimeout(r, 300)); // requests on the last certificate too
    wrk.kill("SIGINT");
    const done = await wrk.output();
    const out = new TextDecoder().decode(done.stdout);
    assert.equal(done.code, 0, new TextDecoder().decode(done.stderr));
    const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    assert.ok(total > 100, out);
    assert.doesNotMatch(out, /Non-2xx or 3xx responses/, out);
    assert.equal(serials.size, 2, "both certificates were served in turn");
    const entries = (await logEntries(log)).map((e) => String(e.msg));
    const replacements = entries.filter((m) => m.startsWith("certificates changed")).length;
    assert.ok(replacements >= 10, `${replacements} replacements`);
    assert.deepEqual(entries.filter((m) => /handover|reset/.test(m)), [], "every one handed over");
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const errors = sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
    return { total, replacements, errors, out };
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const migratable = readMigrate() !== null && Deno.uid?.() === 0;

for (const mode of ["fixed", "resolver"] as const) {
  for (const migrate of ["0", "1"] as const) {
    Deno.test({
      name:
        `tls (deno engine, ${mode} listener): replaced under a new-connection load, no request fails (tcp_migrate_req=${migrate})`,
      ignore: !migratable && readMigrate() !== migrate,
      async fn() {
        const r = migratable
          ? await withMigrate(migrate, () => replacedUnderLoad(mode))
          : await replacedUnderLoad(mode);
        assert.ok(r, "net.ipv4.tcp_migrate_req could be set");
        assert.equal(r.errors, 0, r.out);
        console.log(`${mode}: ${r.total} requests, ${r.replacements} replacements, no error`);
      },
    });
  }
}
