/**
 * Several Gatehouse processes on one `libsql` storage and one Pebble: exactly one ACME order
 * for a name they all serve (the others wait on the storage lock, then load the certificate),
 * and a lock holder killed with SIGKILL blocks them only until its lock goes stale.
 */
import assert from "node:assert/strict";
import { CLI_TEST_APP, freePort } from "../fixtures/helpers.ts";
import { serve, up } from "../fixtures/process.ts";
import { servedCert } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, waitFor } from "./_server.ts";

const NAME = "shared.test";

Deno.test("two processes on one libsql storage: one order; a killed lock holder does not block them", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const storage = { module: "libsql", url: `file:${dir}/shared.db` };
  const procs: Awaited<ReturnType<typeof serve>>[] = [];
  try {
    // A process holding the name's issue lock (as one killed mid-order leaves it).
    const holder = await serve(
      {
        logging: { logs: { default: { writer: { output: "discard" } } } },
        storage,
        apps: { gatehouse_test: { lock: `issue_cert_${NAME}` } },
      },
      [],
      CLI_TEST_APP,
    );
    procs.push(holder);
    await up(holder.base);

    const ports = [freePort(), freePort()];
    const logs = ports.map((_, i) => `${dir}/server${i}.log`);
    for (let i = 0; i < 2; i++) {
      const p = await serve({
        logging: fileLogging(logs[i]),
        storage,
        apps: {
          http: {
            http_port: freePort(),
            https_port: ports[i],
            servers: {
              srv0: {
                listen: [`127.0.0.1:${ports[i]}`],
                automatic_https: { disable_redirects: true },
                routes: [{
                  match: [{ host: [NAME] }],
                  handle: [{ handler: "static_response", body: `server ${i}` }],
                }],
              },
            },
          },
          tls: {
            automation: {
              policies: [{
                subjects: [NAME],
                issuers: [
                  pebbleIssuer(pebble, {
                    http: { alternate_port: pebble.httpPort },
                    "tls-alpn": { disabled: true },
                  }),
                ],
              }],
            },
          },
        },
      });
      procs.push(p);
    }
    await Promise.all(procs.slice(1).map((p) => up(p.base)));
    // Both wait on the lock the holder has; nothing is ordered.
    for (const log of logs) {
      await waitFor(
        async () =>
          (await logEntries(log)).some((e) => e.msg === "acquiring lock" && e.identifier === NAME),
        20_000,
        "acquiring lock",
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(pebble.orderCount(), 0);
    for (const log of logs) {
      assert.ok(!(await logEntries(log)).some((e) => e.msg === "lock acquired"));
    }

    // SIGKILL: no cleanup runs, the lock row stays until it goes stale.
    holder.p.child.kill("SIGKILL");
    await holder.p.status;
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
    assert.equal(pebble.orderCount(), 1, "exactly one ACME order");
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
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
