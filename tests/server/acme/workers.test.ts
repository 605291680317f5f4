/**
 * Two worker processes of one server and Pebble: the certificate is ordered once (the
 * workers share the storage; the one holding the name's lock orders it, the other loads what
 * it stored), the HTTP-01 validation is answered whichever worker Pebble's request reaches
 * (the challenge is in the storage too), and both serve the one certificate; after a
 * revocation through the admin API, both serve the one replacement.
 */
import assert from "node:assert/strict";
import { freePort } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import { call } from "../fixtures/helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, normSerial, pebbleIssuer, waitFor } from "./_server.ts";
import { tlsAnswersByWorker, workerRoute } from "../workers/_workers.ts";

const NAME = "workers.test";

Deno.test("workers: one ACME order from Pebble for two workers, both serving the certificate", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const log = `${dir}/server.log`;
  const https = freePort();
  const s = await serve({
    logging: fileLogging(log),
    apps: {
      http: {
        http_port: pebble.httpPort,
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            routes: [workerRoute("ordered once", [{ host: [NAME] }])],
          },
        },
      },
      tls: {
        automation: {
          policies: [{
            subjects: [NAME],
            issuers: [pebbleIssuer(pebble, { "tls-alpn": { disabled: true } })],
          }],
        },
      },
    },
  }, ["--workers", "2"]);
  try {
    await up(s.base);
    const seen = await waitFor(
      async () => {
        const byWorker = await tlsAnswersByWorker(https, NAME, 2, 40);
        const served = [...byWorker.values()].filter((a) => a.body === "ordered once");
        return served.length === 2 ? byWorker : null;
      },
      60_000,
      "the certificate on both workers",
    );
    const [a, b] = [...seen.values()];
    assert.equal(a.serial, b.serial, "both serve the one certificate");
    assert.equal(pebble.orderCount(), 1, "exactly one ACME order");
    const entries = await logEntries(log);
    const obtained = entries.filter((e) =>
      e.msg === "certificate obtained successfully" && e.identifier === NAME
    );
    assert.equal(obtained.length, 1, "one worker obtained it");

    // a revocation through the admin API: one worker revokes and orders the replacement, and
    // every worker serves the replacement once the answer came
    const revoked = await call(s.base, "POST", "/tls/revoke", { name: NAME, reason: 4 });
    assert.equal(revoked.status, 200, revoked.body);
    const { replacement } = JSON.parse(revoked.body);
    const after = await tlsAnswersByWorker(https, NAME);
    assert.equal(after.size, 2);
    for (const t of after.values()) assert.equal(normSerial(t.serial), normSerial(replacement));
    assert.equal(pebble.orderCount(), 2, "one more order, for the replacement");
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
