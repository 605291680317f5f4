/**
 * A Gatehouse server with `zerossl` issuers on ZeroSSL's API (a local stand-in that checks the
 * HTTP validation against the server for real): the certificate is obtained at start, the
 * validation file answered by the server's own HTTP port before its routes, the certificate
 * served and trusted through the API's CA, kept in storage with its ZeroSSL id, revoked and
 * replaced through the admin API. A wrong API key and an API that does not answer are logged
 * clearly and retried with a growing delay while the server keeps serving.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startChalltestsrv } from "./_challtestsrv.ts";
import { fileLogging, logEntries, normSerial, waitFor } from "./_server.ts";
import { startFakeZeroSsl } from "./_zerossl_api.ts";

const API_KEY = "server-test-key-71d0";

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

Deno.test("zerossl server: certificate from ZeroSSL's API at start, validated on the server's HTTP port, served, revoked and replaced", async () => {
  const dns = await startChalltestsrv();
  const httpPort = freePort();
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort, dns: dns.dns });
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const log = `${dir}/server.log`;
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: site(https, httpPort, ["zs.test"]),
      tls: {
        automation: {
          policies: [{
            subjects: ["zs.test"],
            key_type: "rsa2048",
            issuers: [{ module: "zerossl", api_key: API_KEY, api_url: api.url }],
          }],
        },
      },
    },
  });
  try {
    const got = await waitFor(
      async () => {
        const c = await servedCert(https, "zs.test");
        return c?.names.includes("zs.test") ? c : null;
      },
      30_000,
      "the certificate from ZeroSSL",
    );
    assert.deepEqual(got.names, ["zs.test"]);
    const ca = `${dir}/zerossl-root.pem`;
    await Deno.writeTextFile(ca, api.rootPem);
    const res = await curl(`https://zs.test:${https}/`, {
      ca,
      resolve: `zs.test:${https}:127.0.0.1`,
    });
    assert.equal(res.status, 200, res.stderr);
    assert.equal(res.body, "hello zs.test");
    // ZeroSSL's request was answered by this server's HTTP port (the redirect server).
    const entries = await logEntries(log);
    assert.ok(
      entries.some((e) =>
        e.msg === "served HTTP validation credential" && e.identifier === "zs.test" &&
        e.logger === "tls.issuance.zerossl"
      ),
      JSON.stringify(entries.filter((e) => String(e.logger).startsWith("tls"))),
    );
    // Storage: certmagic's layout, with ZeroSSL's certificate object as issuer_data.
    const meta = JSON.parse(
      await Deno.readTextFile(`${server.storage}/certificates/zerossl/zs.test/zs.test.json`),
    );
    const first = [...api.certificates.values()].find((c) => c.status === "issued")!;
    assert.equal(meta.issuer_data.id, first.id);
    assert.deepEqual(meta.sans, ["zs.test"]);
    // Revoke and replace through the admin API.
    const r = await fetch(`${server.admin}/tls/revoke`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.admin },
      body: JSON.stringify({ name: "zs.test", reason: 1 }),
    });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(normSerial(body.revoked), normSerial(got.serial));
    assert.notEqual(body.replacement, body.revoked);
    assert.equal(first.status, "revoked");
    assert.equal(first.revokedReason, "keyCompromise");
    const now = await waitFor(
      async () => {
        const c = await servedCert(https, "zs.test");
        return c && normSerial(c.serial) === normSerial(body.replacement) ? c : null;
      },
      20_000,
      "the replacement served",
    );
    assert.deepEqual(now.names, ["zs.test"]);
    assert.equal([...api.certificates.values()].filter((c) => c.status === "issued").length, 1);
    assert.ok(!(await Deno.readTextFile(log)).includes(API_KEY), "the API key was logged");
  } finally {
    await server.stop();
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zerossl server: a wrong API key and an API that is down are logged and retried with a growing delay; the server keeps serving", async () => {
  const dns = await startChalltestsrv();
  const httpPort = freePort();
  const live = await startFakeZeroSsl({ apiKey: API_KEY, httpPort, dns: dns.dns });
  const downPort = freePort();
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const plain = freePort();
  const log = `${dir}/server.log`;
  const wrongKey = "wrong-key-0b7e";
  const http = site(https, httpPort, ["badkey.test", "down.test"]);
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
          policies: [
            {
              subjects: ["badkey.test"],
              issuers: [{ module: "zerossl", api_key: wrongKey, api_url: live.url }],
            },
            {
              subjects: ["down.test"],
              issuers: [{
                module: "zerossl",
                api_key: API_KEY,
                api_url: `http://127.0.0.1:${downPort}`,
              }],
            },
          ],
        },
      },
    },
  });
  let back: Awaited<ReturnType<typeof startFakeZeroSsl>> | undefined;
  try {
    const failures = (name: string) => async () => {
      const f = (await logEntries(log)).filter((e) =>
        e.msg === "could not get certificate" && e.identifier === name
      );
      return f.length >= 3 ? f : null;
    };
    const bad = await waitFor(failures("badkey.test"), 60_000, "three failures (wrong key)");
    assert.match(
      String(bad[0].error),
      /zerossl: the ZeroSSL API refused POST \/certificates: invalid_access_key \(code 101, HTTP 200\); check api_key/,
    );
    const down = await waitFor(failures("down.test"), 90_000, "three failures (API down)");
    assert.match(
      String(down[0].error),
      /the ZeroSSL API at http:\/\/127\.0\.0\.1:\d+ did not answer POST \/certificates .*check api_url/,
    );
    for (const f of [bad, down]) {
      const delays = f.map((e) => e.retrying_in_ms as number);
      assert.ok(delays[1] > delays[0] && delays[2] > delays[1], JSON.stringify(delays));
    }
    assert.ok(!(await Deno.readTextFile(log)).includes(wrongKey), "the key was logged");
    // Meanwhile every other site answers.
    const r = await fetch(`http://127.0.0.1:${plain}/`);
    assert.equal(await r.text(), "still serving");
    // The API comes back: the next retry obtains the certificate.
    back = await startFakeZeroSsl({ apiKey: API_KEY, httpPort, dns: dns.dns, port: downPort });
    const got = await waitFor(
      async () => {
        const c = await servedCert(https, "down.test");
        return c?.names.includes("down.test") ? c : null;
      },
      60_000,
      "the certificate once the API answers",
    );
    assert.deepEqual(got.names, ["down.test"]);
    assert.equal(live.certificates.size, 0, "nothing was created with the wrong key");
  } finally {
    await server.stop();
    await back?.stop();
    await live.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zerossl server: on-demand with key_type rsa2048 (the shape of Caddy's `cert_issuer zerossl <key>` corpus config)", async () => {
  const dns = await startChalltestsrv();
  const httpPort = freePort();
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort, dns: dns.dns });
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const server = await tlsServer({
    apps: {
      http: {
        http_port: httpPort,
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            tls_connection_policies: [{}],
            routes: [{ handle: [{ handler: "static_response", body: "on demand" }] }],
          },
        },
      },
      tls: {
        automation: {
          policies: [{
            on_demand: true,
            key_type: "rsa2048",
            issuers: [{ module: "zerossl", api_key: API_KEY, api_url: api.url }],
          }],
        },
      },
    },
  });
  try {
    assert.equal(api.certificates.size, 0, "nothing is created before a handshake asks");
    const ca = `${dir}/zerossl-root.pem`;
    await Deno.writeTextFile(ca, api.rootPem);
    const res = await curl(`https://od.test:${https}/`, {
      ca,
      resolve: `od.test:${https}:127.0.0.1`,
      extra: ["--max-time", "30"],
    });
    assert.equal(res.status, 200, res.stderr);
    assert.equal(res.body, "on demand");
    const [cert] = [...api.certificates.values()];
    assert.equal(cert.status, "issued");
    assert.deepEqual(cert.names, ["od.test"]);
    // The served certificate carries an RSA 2048 key.
    const pem = await Deno.readTextFile(
      `${server.storage}/certificates/zerossl/od.test/od.test.crt`,
    );
    const info = new Deno.Command("openssl", {
      args: ["x509", "-noout", "-text"],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const w = info.stdin.getWriter();
    await w.write(new TextEncoder().encode(pem));
    await w.close();
    const text = new TextDecoder().decode((await info.output()).stdout);
    assert.match(text, /Public-Key: \(2048 bit\)/);
    assert.match(text, /rsaEncryption/);
  } finally {
    await server.stop();
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
