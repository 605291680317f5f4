/**
 * Several Gatehouse processes on one `libsql` storage and one Pebble: a process killed with
 * SIGKILL in the middle of its order (holding the name's storage lock) blocks the others only
 * until its lock goes stale; then exactly one of them places an order and the other waits on
 * the lock and loads the certificate. Run on a database file and on a remote database (the
 * Hrana test server of tests/d1, over loopback HTTP with an auth token).
 */
import assert from "node:assert/strict";
import { freePort } from "../fixtures/helpers.ts";
import { serve, up } from "../fixtures/process.ts";
import { servedCert } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, waitFor } from "./_server.ts";
import { type HranaServer, startHranaServer } from "../../d1/_hrana_server.ts";

const NAME = "shared.test";

type Pebble = Awaited<ReturnType<typeof startPebble>>;

for (const remote of [false, true]) {
  Deno.test(`three processes on one libsql storage (${remote ? "remote" : "file"}): one killed mid-order does not block the others, which then place one order`, () =>
    shared(remote));
}

async function shared(remote: boolean) {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  let hrana: HranaServer | undefined;
  let storage: Record<string, unknown> = { module: "libsql", url: `file:${dir}/shared.db` };
  if (remote) {
    hrana = startHranaServer(dir, "shared-token");
    storage = { module: "libsql", url: hrana.url("shared"), auth_token: "shared-token" };
  }
  const gatehouse = (
    https: number,
    log: string,
    body: string,
    challenges?: Record<string, unknown>,
  ) => config(pebble, storage, https, log, body, challenges);
  const procs: Awaited<ReturnType<typeof serve>>[] = [];
  try {
    // The holder solves with dns-01 and asks a resolver that never answers: it stays in the
    // middle of its order (waiting for the record to propagate) until it is killed, however
    // slowly the machine starts the others. They solve with http-01.
    const silent = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
    const silentPort = (silent.addr as Deno.NetAddr).port;
    const holderLog = `${dir}/holder.log`;
    const holder = await serve(gatehouse(freePort(), holderLog, "holder", {
      dns: {
        provider: { name: "challtestsrv", url: pebble.dnsManagement },
        resolvers: [`127.0.0.1:${silentPort}`],
        propagation_timeout: "10m",
      },
    }));
    procs.push(holder);
    // Its order is placed with the lock held; it then waits on the record's propagation.
    await waitFor(() => Promise.resolve(pebble.orderCount() === 1), 30_000, "the holder's order");
    assert.equal(pebble.orderCount(), 1);

    const ports = [freePort(), freePort()];
    const logs = ports.map((_, i) => `${dir}/server${i}.log`);
    for (let i = 0; i < 2; i++) {
      procs.push(await serve(gatehouse(ports[i], logs[i], `server ${i}`)));
    }
    await Promise.all(procs.slice(1).map((p) => up(p.base)));
    // Both wait on the lock the holder has; nothing is ordered.
    for (const log of logs) {
      await waitFor(
        async () =>
          (await logEntries(log)).some((e) => e.msg === "acquiring lock" && e.identifier === NAME),
        60_000, // an upper bound for the event, not a timing: a loaded machine starts slowly
        "acquiring lock",
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(pebble.orderCount(), 1, "only the holder's order so far");
    assert.ok(
      !(await logEntries(holderLog)).some((e) => e.msg === "could not get certificate"),
      "the holder is still in the middle of its order",
    );
    for (const log of logs) {
      assert.ok(!(await logEntries(log)).some((e) => e.msg === "lock acquired"));
    }

    // SIGKILL: no cleanup runs, the lock row stays until it goes stale. The challenge port is
    // free again for whoever takes over.
    holder.p.child.kill("SIGKILL");
    await holder.p.status;
    silent.close();
    const served = await Promise.all(ports.map((port) =>
      waitFor(
        async () => {
          const c = await servedCert(port, NAME);
          return c?.names.includes(NAME) ? c : null;
        },
        60_000,
        `the certificate on ${port}`,
      )
    ));
    assert.equal(served[0].serial, served[1].serial, "both serve the one certificate");
    assert.equal(pebble.orderCount(), 2, "exactly one ACME order after the holder's");
    const entries = await Promise.all(logs.map(logEntries));
    const obtained = entries.map((es) =>
      es.some((e) => e.msg === "certificate obtained successfully" && e.identifier === NAME)
    );
    assert.deepEqual(obtained.filter(Boolean).length, 1, "one process obtained it");
  } finally {
    for (const p of procs) {
      try {
        p.p.child.kill("SIGTERM");
      } catch { /* gone */ }
      await p.p.status;
      await Deno.remove(p.dir, { recursive: true }).catch(() => {});
    }
    if (hrana) {
      assert.ok(hrana.stats.served > 0, "the storage was the remote one");
      assert.equal(hrana.stats.refused, 0);
      await hrana.close();
    }
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

function config(
  pebble: Pebble,
  storage: Record<string, unknown>,
  https: number,
  log: string,
  body: string,
  challenges: Record<string, unknown> = {
    http: { alternate_port: pebble.httpPort },
    "tls-alpn": { disabled: true },
    bind_host: "127.0.0.1",
  },
): Record<string, unknown> {
  return {
    logging: fileLogging(log),
    storage,
    apps: {
      http: {
        http_port: freePort(),
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            automatic_https: { disable_redirects: true },
            routes: [{
              match: [{ host: [NAME] }],
              handle: [{ handler: "static_response", body }],
            }],
          },
        },
      },
      tls: {
        automation: {
          policies: [{
            subjects: [NAME],
            issuers: [
              pebbleIssuer(pebble, challenges),
            ],
          }],
        },
      },
    },
  };
}
