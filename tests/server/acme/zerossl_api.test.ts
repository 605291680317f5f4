/**
 * The `zerossl` issuer on ZeroSSL's REST API, against a local stand-in of the API that checks
 * validations for real (HTTP file fetched from our listener, CNAME looked up on a real DNS
 * server, pebble-challtestsrv): obtained certificates chain to the API's CA and match the key;
 * validation material is gone afterwards; failures are named and the certificate cancelled;
 * revocation goes by the id kept as issuer data.
 */
import assert from "node:assert/strict";
import type { Logger } from "../../../lib/server/module/instance.ts";
import { fileStorage } from "../../../lib/server/storage/file_system.ts";
import { generateKey, x509 as loadX509 } from "../../../lib/server/pki/x509.ts";
import { ZeroSslApiIssuer } from "../../../lib/server/tls/issuers/zerossl_api.ts";
import { parseZeroSslIssuerConfig } from "../../../lib/server/tls/zerossl/config.ts";
import type { ZeroSslApiConfig } from "../../../lib/server/tls/zerossl/config.ts";
import { ChalltestsrvDnsProvider } from "../../../lib/server/tls/dns/challtestsrv.ts";
import { freePort } from "../fixtures/helpers.ts";
import { startChalltestsrv } from "./_challtestsrv.ts";
import { startFakeZeroSsl } from "./_zerossl_api.ts";

const API_KEY = "test-access-key-9f2c";
const x509 = await loadX509();

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

function apiConfig(raw: Record<string, unknown>): ZeroSslApiConfig {
  const c = parseZeroSslIssuerConfig({ module: "zerossl", ...raw }, "issuer");
  assert.equal(c.form, "api");
  return c as ZeroSslApiConfig;
}

function certs(chain: string) {
  return [...chain.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)]
    .map((m) => new x509.X509Certificate(m[0]));
}

function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("zerossl issuer (API): HTTP file validation on a standalone listener, chain to ZeroSSL's CA, revoke by id", async () => {
  const dns = await startChalltestsrv();
  const httpPort = freePort();
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort, dns: dns.dns });
  const dir = await Deno.makeTempDir();
  try {
    const storage = fileStorage(dir);
    const lines: string[] = [];
    const issuer = new ZeroSslApiIssuer(
      apiConfig({
        api_key: API_KEY,
        api_url: api.url,
        alternate_http_port: httpPort,
        listen_host: "127.0.0.1",
        validity_days: 90,
      }),
      storage,
      memoryLogger(lines),
    );
    const key = await generateKey();
    const got = await issuer.issue({ names: ["api.test"], key });
    const [leaf, inter] = certs(got.certificatePem);
    assert.ok(inter, "the CA bundle follows the leaf");
    assert.equal(leaf.issuer, inter.subject);
    assert.ok(await leaf.verify({ publicKey: await inter.publicKey.export() }));
    assert.deepEqual(
      leaf.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON().map((n) => n.value),
      ["api.test"],
    );
    assert.equal(issuer.issuerKey, "zerossl");
    // The API saw the documented sequence, every call with the key.
    const calls = api.requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{32}/, "ID")}`);
    assert.deepEqual(calls.slice(0, 2), ["POST /certificates", "POST /certificates/ID/challenges"]);
    assert.ok(calls.includes("GET /certificates/ID"), "polled until issued");
    assert.equal(calls.at(-1), "GET /certificates/ID/download/return");
    assert.ok(api.requests.every((r) => r.key === "good"));
    const fake = [...api.certificates.values()][0];
    assert.equal(fake.status, "issued");
    assert.equal(fake.method, "HTTP_CSR_HASH");
    assert.equal(fake.validityDays, 90);
    // Served from our standalone listener, which is gone now, and nothing left in storage.
    assert.ok(lines.some((l) => l.includes("served HTTP validation credential")));
    assert.ok(portFree(httpPort));
    assert.equal(await storage.exists("zerossl/challenge_tokens/api.test.json"), false);
    // Revocation by the id the issue answered with.
    assert.equal((got.issuerData as { id: string }).id, fake.id);
    await issuer.revoke(got.certificatePem, 4, got.issuerData);
    assert.equal(fake.status, "revoked");
    assert.equal(fake.revokedReason, "Superseded");
    await assert.rejects(issuer.revoke(got.certificatePem, 4), /no ZeroSSL certificate id/);
    // The key never shows in what was logged.
    assert.ok(!lines.join("\n").includes(API_KEY));
    issuer.cleanup();
  } finally {
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zerossl issuer (API): CNAME validation through a DNS provider, wildcard names, records removed", async () => {
  const dns = await startChalltestsrv();
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort: freePort(), dns: dns.dns });
  const dir = await Deno.makeTempDir();
  try {
    const lines: string[] = [];
    const config = apiConfig({
      api_key: API_KEY,
      api_url: api.url,
      cname_validation: { provider: { name: "challtestsrv" }, resolvers: [dns.dnsAddress] },
    });
    const cname = {
      provider: new ChalltestsrvDnsProvider(dns.management),
      ttlMs: config.cname!.ttlMs,
      propagationDelayMs: 0,
      propagationTimeoutMs: 20_000,
      resolvers: config.cname!.resolvers,
    };
    const issuer = new ZeroSslApiIssuer(config, fileStorage(dir), memoryLogger(lines), cname);
    assert.equal(issuer.accepts("*.cname.test"), true);
    const got = await issuer.issue({ names: ["*.cname.test"], key: await generateKey() });
    const [leaf] = certs(got.certificatePem);
    assert.deepEqual(
      leaf.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON().map((n) => n.value),
      ["*.cname.test"],
    );
    const fake = [...api.certificates.values()][0];
    assert.equal(fake.method, "CNAME_CSR_HASH");
    // The record ZeroSSL found (it issued) is deleted from the DNS server (asked in lower
    // case: challtestsrv's lookups are case-sensitive).
    const p1 = (fake.validation["*.cname.test"].cname_validation_p1 as string).toLowerCase();
    assert.equal(p1.endsWith(".cname.test"), true);
    await assert.rejects(
      Deno.resolveDns(p1, "CNAME", { nameServer: dns.dns }),
      Deno.errors.NotFound,
    );
    assert.ok(!lines.some((l) => l.includes("failed CNAME record propagation check")));
    issuer.cleanup();
  } finally {
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zerossl issuer (API): a failed validation names the name and reason and cancels the certificate", async () => {
  const dns = await startChalltestsrv();
  // ZeroSSL looks at one port, our listener answers on another: the file is never found.
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort: freePort(), dns: dns.dns });
  const dir = await Deno.makeTempDir();
  try {
    const storage = fileStorage(dir);
    const lines: string[] = [];
    const listen = freePort();
    const issuer = new ZeroSslApiIssuer(
      apiConfig({
        api_key: API_KEY,
        api_url: api.url,
        alternate_http_port: listen,
        listen_host: "127.0.0.1",
      }),
      storage,
      memoryLogger(lines),
    );
    await assert.rejects(
      issuer.issue({ names: ["fail.test"], key: await generateKey() }),
      /the ZeroSSL API refused POST \/certificates\/[0-9a-f]+\/challenges: domain_control_validation_failed .*fail\.test http:\/\/fail\.test\/\.well-known\/pki-validation\/[0-9A-F]+\.txt \(file_found=0, connection_failed/,
    );
    const fake = [...api.certificates.values()][0];
    assert.equal(fake.status, "cancelled");
    assert.ok(lines.some((l) => l.includes("canceled certificate")));
    assert.ok(portFree(listen));
    assert.equal(await storage.exists("zerossl/challenge_tokens/fail.test.json"), false);
    issuer.cleanup();
  } finally {
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zerossl issuer (API): a wrong API key and an API that does not answer are named, without the key", async () => {
  const dns = await startChalltestsrv();
  const api = await startFakeZeroSsl({ apiKey: API_KEY, httpPort: freePort(), dns: dns.dns });
  const dir = await Deno.makeTempDir();
  try {
    const wrong = "wrong-key-55aa";
    const bad = new ZeroSslApiIssuer(
      apiConfig({ api_key: wrong, api_url: api.url }),
      fileStorage(dir),
      memoryLogger(),
    );
    const err = await bad.issue({ names: ["key.test"], key: await generateKey() }).then(
      () => assert.fail("issued with a wrong key"),
      (e) => e as Error,
    );
    assert.match(
      err.message,
      /the ZeroSSL API refused POST \/certificates: invalid_access_key \(code 101, HTTP 200\); check api_key/,
    );
    assert.ok(!err.message.includes(wrong));
    assert.equal(api.certificates.size, 0, "nothing was created");
    const down = new ZeroSslApiIssuer(
      apiConfig({ api_key: API_KEY, api_url: `http://127.0.0.1:${freePort()}` }),
      fileStorage(dir),
      memoryLogger(),
    );
    const e2 = await down.issue({ names: ["down.test"], key: await generateKey() }).then(
      () => assert.fail("issued without an API"),
      (e) => e as Error,
    );
    assert.match(
      e2.message,
      /the ZeroSSL API at http:\/\/127\.0\.0\.1:\d+ did not answer POST \/certificates \(.+\); check api_url and the network/,
    );
    assert.ok(!e2.message.includes(API_KEY));
    bad.cleanup();
    down.cleanup();
  } finally {
    await api.stop();
    await dns.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
