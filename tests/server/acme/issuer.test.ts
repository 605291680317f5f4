/**
 * The `acme` issuer against a real Pebble: account kept in storage, HTTP-01 and TLS-ALPN-01
 * answered by standalone listeners, EAB, revocation, a failed challenge reported with the
 * name and type. The server-level flows (obtain at start, serve, renew, on-demand, two
 * instances on one storage) are in the other files of this folder.
 */
import assert from "node:assert/strict";
import type { Logger } from "../../../lib/server/module/instance.ts";
import { fileStorage } from "../../../lib/server/storage/file_system.ts";
import { AcmeIssuer } from "../../../lib/server/tls/issuers/acme.ts";
import { parseAcmeIssuerConfig } from "../../../lib/server/tls/issuers/acme_config.ts";
import { generateKey, x509 as loadX509 } from "../../../lib/server/pki/x509.ts";
import { AcmeOrderError } from "../../../lib/server/tls/acme/order.ts";
import { startPebble } from "./_pebble.ts";

/** A logger that keeps messages, to assert on what was logged. */
function memoryLogger(lines: string[] = [], name = "test"): Logger {
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    lines.push(`${level} ${name} ${msg} ${JSON.stringify(fields ?? {})}`);
  return {
    name,
    debug: () => {},
    info: log("INFO"),
    warn: log("WARN"),
    error: log("ERROR"),
    named: (sub) => memoryLogger(lines, `${name}.${sub}`),
    enabled: () => true,
  };
}

const x509 = await loadX509();

function leaf(chain: string) {
  const pem = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/)![0];
  return new x509.X509Certificate(pem);
}

Deno.test("acme issuer: HTTP-01 and TLS-ALPN-01 orders, account kept in storage, revoke", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  try {
    const storage = fileStorage(dir);
    const lines: string[] = [];
    const make = (challenges: Record<string, unknown>) =>
      new AcmeIssuer(
        parseAcmeIssuerConfig({
          module: "acme",
          ca: pebble.directory,
          email: "ops@example.com",
          trusted_roots_pem_files: [pebble.tlsRootFile],
          challenges: {
            ...challenges,
            bind_host: "127.0.0.1",
          },
        }, "issuer"),
        storage,
        memoryLogger(lines),
      );
    const http = make({
      http: { alternate_port: pebble.httpPort },
      "tls-alpn": { disabled: true },
    });
    const got = await http.issue({ names: ["one.test", "www.one.test"], key: await generateKey() });
    const cert = leaf(got.certificatePem);
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON()
      .map((n) => n.value).sort();
    assert.deepEqual(san, ["one.test", "www.one.test"]);
    assert.ok(lines.some((l) => l.includes("trying to solve challenge") && l.includes("http-01")));
    // The account is in storage under certmagic's layout and reused.
    const acctKey = "acme/127.0.0.1-" + new URL(pebble.directory).port +
      "-dir/users/ops@example.com/ops.json";
    const reg = JSON.parse(new TextDecoder().decode(await storage.load(acctKey)));
    assert.equal(reg.status, "valid");
    assert.match(reg.location, /^https:\/\/127\.0\.0\.1:\d+\//);
    assert.equal(lines.filter((l) => l.includes("new ACME account registered")).length, 1);

    const alpn = make({
      http: { disabled: true },
      "tls-alpn": { alternate_port: pebble.tlsPort },
    });
    const got2 = await alpn.issue({ names: ["two.test"], key: await generateKey() });
    assert.ok(
      lines.some((l) => l.includes("trying to solve challenge") && l.includes("tls-alpn-01")),
    );
    assert.equal(lines.filter((l) => l.includes("new ACME account registered")).length, 1);
    assert.equal(leaf(got2.certificatePem).subject, "CN=two.test");

    // Revoke: Pebble reports the serial as revoked, the other stays valid.
    await alpn.revoke(got2.certificatePem, 4);
    assert.equal(await pebble.certStatus(leaf(got2.certificatePem).serialNumber), "Revoked");
    assert.equal(await pebble.certStatus(cert.serialNumber), "Valid");
    http.cleanup();
    alpn.cleanup();
  } finally {
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("acme issuer: a failed challenge names the identifier and type; the other type is tried next", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  try {
    const lines: string[] = [];
    // Hold the HTTP port with a server that answers 404: the http-01 validation fails.
    const blocker = Deno.serve(
      { hostname: "127.0.0.1", port: pebble.httpPort, onListen() {} },
      () => new Response("nope", { status: 404 }),
    );
    try {
      const issuer2 = new AcmeIssuer(
        parseAcmeIssuerConfig({
          module: "acme",
          ca: pebble.directory,
          trusted_roots_pem_files: [pebble.tlsRootFile],
          challenges: {
            http: { alternate_port: pebble.httpPort },
            "tls-alpn": { alternate_port: pebble.tlsPort },
            bind_host: "127.0.0.1",
          },
        }, "issuer"),
        fileStorage(dir),
        memoryLogger(lines),
      );
      const err = await issuer2.issue({ names: ["fail.test"], key: await generateKey() }).then(
        () => assert.fail("issued despite a failing challenge"),
        (e) => e,
      );
      assert.ok(err instanceof AcmeOrderError, String(err));
      assert.equal(err.code, "challenge_failed");
      assert.equal(err.identifier, "fail.test");
      assert.equal(err.challenge, "http-01");
      // Second attempt of the same issuer: http-01 failed for this name, tls-alpn-01 goes first.
      const ok = await issuer2.issue({ names: ["fail.test"], key: await generateKey() });
      assert.equal(leaf(ok.certificatePem).subject, "CN=fail.test");
      const tried = lines.filter((l) => l.includes("trying to solve challenge"));
      assert.deepEqual(
        tried.map((l) => JSON.parse(l.slice(l.indexOf("{"))).challenge_type),
        ["http-01", "tls-alpn-01"],
      );
      issuer2.cleanup();
    } finally {
      await blocker.shutdown();
    }
  } finally {
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("acme issuer: External Account Binding registers with the CA's key id", async () => {
  const macKey = "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W";
  const pebble = await startPebble({ eab: { "kid-1": macKey } });
  const dir = await Deno.makeTempDir();
  try {
    const cfg = (eab?: Record<string, string>) =>
      parseAcmeIssuerConfig({
        module: "acme",
        ca: pebble.directory,
        email: "eab@example.com",
        trusted_roots_pem_files: [pebble.tlsRootFile],
        external_account: eab,
        challenges: { http: { alternate_port: pebble.httpPort }, bind_host: "127.0.0.1" },
      }, "issuer");
    // Without EAB the CA refuses the account, and nothing is stored.
    const lines: string[] = [];
    const plain = new AcmeIssuer(cfg(), fileStorage(dir), memoryLogger(lines));
    const key = await generateKey();
    await assert.rejects(plain.issue({ names: ["eab.test"], key }), /externalAccountBinding/);
    assert.equal(await fileStorage(dir).exists("acme"), false);
    const withEab = new AcmeIssuer(
      cfg({ key_id: "kid-1", mac_key: macKey }),
      fileStorage(dir),
      memoryLogger(lines),
    );
    const got = await withEab.issue({ names: ["eab.test"], key });
    assert.equal(leaf(got.certificatePem).subject, "CN=eab.test");
    assert.match(pebble.log(), /Successful newAccount Binding with CA using kid "kid-1"/);
    plain.cleanup();
    withEab.cleanup();
  } finally {
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("acme issuer: after a failed attempt, test_ca is tried first", async () => {
  const main = await startPebble();
  const test = await startPebble({ httpPort: main.httpPort, tlsPort: main.tlsPort });
  const dir = await Deno.makeTempDir();
  try {
    const lines: string[] = [];
    const roots = `${dir}/roots.pem`;
    await Deno.writeTextFile(
      roots,
      (await Deno.readTextFile(main.tlsRootFile)) + (await Deno.readTextFile(test.tlsRootFile)),
    );
    const issuer = new AcmeIssuer(
      parseAcmeIssuerConfig({
        module: "acme",
        ca: main.directory,
        test_ca: test.directory,
        trusted_roots_pem_files: [roots],
        challenges: {
          http: { alternate_port: main.httpPort },
          "tls-alpn": { disabled: true },
          bind_host: "127.0.0.1",
        },
      }, "issuer"),
      fileStorage(dir),
      memoryLogger(lines),
    );
    await main.setDnsFail("dry.test", true);
    await assert.rejects(issuer.issue({ names: ["dry.test"], key: await generateKey() }));
    assert.equal(test.orderCount(), 0, "the first attempt goes to the CA itself");
    await main.setDnsFail("dry.test", false);
    const got = await issuer.issue({ names: ["dry.test"], key: await generateKey() });
    assert.equal(test.orderCount(), 1, "the retry tried the test CA first");
    assert.equal(main.orderCount(), 2);
    assert.ok(lines.some((l) => l.includes("trying the test CA first")));
    assert.match(leaf(got.certificatePem).issuer, /Pebble Intermediate/);
    assert.equal(await main.certStatus(leaf(got.certificatePem).serialNumber), "Valid");
    issuer.cleanup();
  } finally {
    await test.stop();
    await main.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
