/**
 * TLS client authentication (`client_authentication` in connection policies) on a real
 * server: certificates signed by the trusted CA are accepted (and visible in the
 * `tls.client` placeholders and the access log), others refused per mode — the connection is
 * closed before any route runs; leaf verifiers, policies chosen by SNI, the automatic choice
 * of the node listener engine, and config errors.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort, type LogRecord } from "../http/harness.ts";
import { type ClientCert, makeClientPki, tlsGet } from "./client_pki.ts";

const pki = await makeClientPki();
const dir = await Deno.makeTempDir({ prefix: "gatehouse-mtls-" });
await Deno.writeTextFile(`${dir}/trusted.pem`, pki.trustedCaPem);
await Deno.mkdir(`${dir}/leaves`);
await Deno.writeTextFile(`${dir}/leaves/alice.pem`, pki.good.cert);

const BODY = "{http.request.tls.client.subject}|{http.request.tls.client.issuer}|" +
  "{http.request.tls.client.serial}|{http.request.tls.client.fingerprint}|" +
  "{http.request.tls.client.san.dns_names}|{http.request.tls.client.san.emails.0}";

async function run(policies: unknown[], server: Record<string, unknown> = {}) {
  const port = freePort();
  const logFile = `${dir}/log-${port}.jsonl`;
  let hits = 0;
  const srv = await startServer({
    config: {
      admin: { disabled: true },
      logging: {
        logs: {
          default: {
            writer: { output: "file", filename: logFile, roll_disabled: true },
            encoder: { format: "json" },
            level: "INFO",
          },
        },
      },
      apps: {
        tls: {
          certificates: {
            load_pem: [{
              certificate: pki.server.leafs.local.cert,
              key: pki.server.leafs.local.key,
            }],
          },
        },
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              logs: {},
              tls_connection_policies: policies,
              routes: [{ handle: [{ handler: "static_response", body: BODY }] }],
              ...server,
            },
          },
        },
      },
    },
  });
  const logs = async () =>
    (await Deno.readTextFile(logFile).catch(() => "")).split("\n").filter(Boolean).map((l) =>
      JSON.parse(l) as LogRecord
    );
  return {
    port,
    logs,
    handled: async () => (await logs()).filter((l) => l.msg === "handled request").length,
    get: (cert?: ClientCert, servername?: string) =>
      tlsGet(port, { ca: pki.server.caPem, cert, servername }).then((a) => {
        hits++;
        return a;
      }),
    hits: () => hits,
    stop: () => srv.stop(),
  };
}

const fileCA = { provider: "file", pem_files: [`${dir}/trusted.pem`] };

Deno.test("mtls require_and_verify: the trusted CA's clients get in with their placeholders; others are refused before any route", async () => {
  const s = await run([{ client_authentication: { ca: fileCA, mode: "require_and_verify" } }]);
  try {
    const ok = await s.get(pki.good);
    assert.notEqual(ok, "refused");
    const [subject, issuer, serial, fingerprint, dns, email] = (ok as { body: string }).body
      .split("|");
    assert.equal(subject, "O=Gatehouse Tests,CN=alice");
    assert.equal(issuer, "CN=Trusted Client CA");
    assert.equal(serial, pki.good.serial.toString());
    assert.equal(fingerprint, createHash("sha256").update(pki.good.der).digest("hex"));
    assert.equal(dns, "alice.clients.test");
    assert.equal(email, "alice@clients.test");
    const rec = (await s.logs()).find((l) => l.msg === "handled request")!;
    const tls = (rec.request as { tls: Record<string, unknown> }).tls;
    assert.equal(tls.client_common_name, "alice");
    assert.equal(tls.client_serial, pki.good.serial.toString());

    // a chain through an intermediate the client sends
    assert.notEqual(await s.get(pki.viaIntermediate), "refused");

    for (
      const [what, cert] of [
        ["no certificate", undefined],
        ["another CA", pki.untrusted],
        ["expired", pki.expired],
        ["server-only usage", pki.serverOnly],
      ] as const
    ) {
      assert.equal(await s.get(cert), "refused", what);
    }
    assert.equal(await s.handled(), 2, "refused connections never reached a route");
    const refusals = (await s.logs()).filter((l) =>
      l.msg === "client certificate refused; connection closed"
    );
    assert.equal(refusals.length, 4);
    assert.ok(refusals.some((r) => r.reason === "certificate signed by unknown authority"));
    assert.ok(refusals.some((r) => r.reason === "a client certificate is required"));
  } finally {
    await s.stop();
  }
});

Deno.test("mtls modes: request, require, verify_if_given", async () => {
  const ca = { provider: "inline", trusted_ca_certs: [pki.trustedCaDerB64] };
  const expect = {
    request: { none: true, untrusted: true, good: true },
    require: { none: false, untrusted: true, good: true },
    verify_if_given: { none: true, untrusted: false, good: true },
  };
  for (const [mode, want] of Object.entries(expect)) {
    const s = await run([{ client_authentication: { ca, mode } }]);
    try {
      const none = await s.get();
      const untrusted = await s.get(pki.untrusted);
      const good = await s.get(pki.good);
      assert.equal(none !== "refused", want.none, `${mode}: no certificate`);
      assert.equal(untrusted !== "refused", want.untrusted, `${mode}: untrusted`);
      assert.equal(good !== "refused", want.good, `${mode}: trusted`);
      if (none !== "refused") {
        assert.equal(none.body, "|||||", `${mode}: no certificate, empty placeholders`);
      }
      if (untrusted !== "refused") {
        assert.match(untrusted.body, /^O=Gatehouse Tests,CN=mallory\|CN=Other Client CA\|/);
      }
    } finally {
      await s.stop();
    }
  }
});

Deno.test("mtls leaf verifier and trusted_leaf_certs: only the listed certificates", async () => {
  const s = await run([{
    client_authentication: {
      ca: {
        provider: "combined",
        sources: [fileCA, { provider: "inline", trusted_ca_certs: [pki.trustedCaDerB64] }],
      },
      verifiers: [{
        verifier: "leaf",
        leaf_certs_loaders: [{ loader: "folder", folders: [`${dir}/leaves`] }],
      }],
    },
  }]);
  try {
    assert.notEqual(await s.get(pki.good), "refused");
    assert.equal(await s.get(pki.good2), "refused", "same CA, not on the list");
  } finally {
    await s.stop();
  }
  const leafB64 = btoa(String.fromCharCode(...pki.good2.der));
  const t = await run([{
    client_authentication: { trusted_leaf_certs: [leafB64], mode: "require" },
  }]);
  try {
    assert.notEqual(await t.get(pki.good2), "refused");
    assert.equal(await t.get(pki.good), "refused");
  } finally {
    await t.stop();
  }
});

Deno.test("mtls policies chosen by SNI: one name requires certificates, the others do not", async () => {
  const s = await run([
    { match: { sni: ["secure.localhost"] }, client_authentication: { ca: fileCA } },
    {},
  ]);
  try {
    assert.equal(await s.get(undefined, "secure.localhost"), "refused");
    assert.notEqual(await s.get(pki.good, "secure.localhost"), "refused");
    const open = await s.get(undefined, "localhost");
    assert.notEqual(open, "refused");
  } finally {
    await s.stop();
  }
});

Deno.test("mtls config: deno engine refused by name, unknown modes and providers named", async () => {
  const cases: [unknown[], Record<string, unknown>, RegExp][] = [
    [
      [{ client_authentication: { ca: fileCA } }],
      { listener_engine: "deno" },
      /cannot ask clients for certificates/,
    ],
    [[{ client_authentication: { mode: "sometimes" } }], {}, /client auth mode not recognized/],
    [
      [{ client_authentication: { ca: { provider: "http", endpoints: ["x"] } } }],
      {},
      /tls\.ca_pool\.source\.http/,
    ],
    [[{ client_authentication: { verifiers: [{ verifier: "dummy" }] } }], {}, /verifier "dummy"/],
    [
      [{ client_authentication: { ca: fileCA, trusted_ca_certs: [pki.trustedCaDerB64] } }],
      {},
      /conflicting/,
    ],
    [
      [{ client_authentication: { ca: { provider: "file", pem_files: [`${dir}/missing.pem`] } } }],
      {},
      /missing\.pem/,
    ],
  ];
  for (const [policies, server, re] of cases) {
    await assert.rejects(run(policies, server), re, JSON.stringify(policies));
  }
});
