/**
 * A Gatehouse server getting its certificates from a real Pebble: obtained at start through
 * HTTP-01 (answered by the server's own redirect listener) and TLS-ALPN-01 (standalone
 * responder), served and trusted through Pebble's root, renewed without a restart, revoked and
 * replaced through the admin API; a failing challenge retried with a growing delay while the
 * server keeps serving.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, normSerial, pebbleIssuer, rootFile, waitFor } from "./_server.ts";

function site(https: number, httpPort: number, hosts: string[]): Record<string, unknown> {
  return {
    http_port: httpPort,
    https_port: https,
    servers: {
      srv0: {
        listen: [`127.0.0.1:${https}`],
        routes: hosts.map((h) => ({
          match: [{ host: [h] }],
          handle: [{ handler: "static_response", body: `hello ${h}` }],
        })),
      },
    },
  };
}

Deno.test("acme server: obtain (HTTP-01, TLS-ALPN-01), serve, renew without restart, revoke and replace", async () => {
  const pebble = await startPebble({ validitySeconds: 30 });
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const log = `${dir}/server.log`;
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: site(https, pebble.httpPort, ["e2e.test", "alpn.test"]),
      tls: {
        automation: {
          renew_interval: "1s",
          policies: [
            {
              subjects: ["e2e.test"],
              renewal_window_ratio: 0.5,
              issuers: [pebbleIssuer(pebble, { "tls-alpn": { disabled: true } })],
            },
            {
              subjects: ["alpn.test"],
              issuers: [
                pebbleIssuer(pebble, {
                  http: { disabled: true },
                  "tls-alpn": { alternate_port: pebble.tlsPort },
                }),
              ],
            },
          ],
        },
      },
    },
  });
  try {
    const root = await rootFile(pebble, dir);
    for (const name of ["e2e.test", "alpn.test"]) {
      const got = await waitFor(
        async () => {
          const c = await servedCert(https, name);
          return c?.names.includes(name) ? c : null;
        },
        30_000,
        `a certificate for ${name}`,
      );
      assert.deepEqual(got.names, [name]);
      const res = await curl(`https://${name}:${https}/`, {
        ca: root,
        resolve: `${name}:${https}:127.0.0.1`,
      });
      assert.equal(res.status, 200, res.stderr);
      assert.equal(res.body, `hello ${name}`);
    }
    const entries = await logEntries(log);
    // HTTP-01 was answered by this server (its redirect listener on http_port).
    assert.ok(
      entries.some((e) =>
        e.msg === "served key authentication" && e.identifier === "e2e.test" &&
        e.challenge === "http-01"
      ),
    );
    assert.ok(
      entries.some((e) =>
        e.msg === "trying to solve challenge" && e.identifier === "alpn.test" &&
        e.challenge_type === "tls-alpn-01"
      ),
    );
    // The certificates are in storage under the CA's issuer key.
    const key = `127.0.0.1-${new URL(pebble.directory).port}-dir`;
    await Deno.stat(`${server.storage}/certificates/${key}/e2e.test/e2e.test.crt`);

    // Renewal: half of 30 s left → renewed, served from the next handshake, no restart.
    const first = (await servedCert(https, "e2e.test"))!.serial;
    const renewed = await waitFor(
      async () => {
        const c = await servedCert(https, "e2e.test");
        return c && c.serial !== first ? c.serial : null;
      },
      40_000,
      "a renewed certificate",
    );
    assert.ok(
      (await logEntries(log)).some((e) =>
        e.msg === "certificate renewed successfully" && e.identifier === "e2e.test"
      ),
    );
    assert.equal(await pebble.certStatus(normSerial(renewed)), "Valid");

    // Revoke and replace through the admin API.
    const r = await fetch(`${server.admin}/tls/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.admin },
      body: JSON.stringify({ name: "e2e.test", reason: 4 }),
    });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(normSerial(body.revoked), normSerial(renewed));
    assert.equal(await pebble.certStatus(normSerial(body.revoked)), "Revoked");
    assert.equal(await pebble.certStatus(normSerial(body.replacement)), "Valid");
    // Served from the next handshakes (a listener that remembers answers per name swaps).
    await waitFor(
      async () => {
        const c = await servedCert(https, "e2e.test");
        return c && normSerial(c.serial) === normSerial(body.replacement);
      },
      10_000,
      "the replacement being served",
    );
    const after = await curl(`https://e2e.test:${https}/`, {
      ca: root,
      resolve: `e2e.test:${https}:127.0.0.1`,
    });
    assert.equal(after.body, "hello e2e.test");
    // An unknown name is a 404 and revokes nothing.
    const orders = pebble.orderCount();
    const bad = await fetch(`${server.admin}/tls/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.admin },
      body: JSON.stringify({ name: "nope.test" }),
    });
    assert.equal(bad.status, 404);
    await bad.body?.cancel();
    assert.equal(pebble.orderCount(), orders);
  } finally {
    await server.stop();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("acme server: a failing challenge is retried with a growing delay and logged; the server keeps serving", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const plain = freePort();
  const log = `${dir}/server.log`;
  await pebble.setDnsFail("retry.test", true);
  const http = site(https, pebble.httpPort, ["retry.test"]);
  (http.servers as Record<string, unknown>).plain = {
    listen: [`127.0.0.1:${plain}`],
    routes: [{ handle: [{ handler: "static_response", body: "still serving" }] }],
  };
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http,
      tls: {
        automation: {
          policies: [{
            subjects: ["retry.test"],
            issuers: [pebbleIssuer(pebble, { "tls-alpn": { disabled: true } })],
          }],
        },
      },
    },
  });
  try {
    const failures = await waitFor(
      async () => {
        const f = (await logEntries(log)).filter((e) =>
          e.msg === "could not get certificate" && e.identifier === "retry.test"
        );
        return f.length >= 3 ? f : null;
      },
      60_000,
      "three failed attempts",
    );
    const delays = failures.map((f) => f.retrying_in_ms as number);
    assert.ok(delays[1] > delays[0] && delays[2] > delays[1], JSON.stringify(delays));
    assert.match(String(failures[0].error), /retry\.test/);
    // Meanwhile the server answers.
    const r = await fetch(`http://127.0.0.1:${plain}/`);
    assert.equal(await r.text(), "still serving");
    // DNS answers again: the next retry obtains it.
    await pebble.setDnsFail("retry.test", false);
    const got = await waitFor(
      async () => {
        const c = await servedCert(https, "retry.test");
        return c?.names.includes("retry.test") ? c : null;
      },
      60_000,
      "the certificate after the DNS fix",
    );
    assert.deepEqual(got.names, ["retry.test"]);
  } finally {
    await server.stop();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
