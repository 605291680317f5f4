/**
 * The `acme` issuer's config (Caddy's field names; refused fields name the reason) and the
 * HTTP-01 answers every server gives before its routes, for challenges another instance put in
 * the shared storage (certmagic's distributed solver).
 */
import assert from "node:assert/strict";
import { parseAcmeIssuerConfig } from "../../../lib/server/tls/issuers/acme_config.ts";
import { issuerKey } from "../../../lib/server/tls/acme/account.ts";
import { freePort, tlsServer } from "../tls/_helpers.ts";

Deno.test("acme issuer config: defaults, Caddy's fields, and clear refusals", () => {
  const d = parseAcmeIssuerConfig({ module: "acme" }, "issuer");
  assert.equal(d.ca, "https://acme-v02.api.letsencrypt.org/directory");
  assert.deepEqual(d.challengeTypes, ["http-01", "tls-alpn-01"]);
  assert.equal(issuerKey(d.ca), "acme-v02.api.letsencrypt.org-directory");
  const full = parseAcmeIssuerConfig({
    module: "acme",
    ca: "https://ca.example/dir",
    test_ca: "https://staging.example/dir",
    email: "a@b.c",
    acme_timeout: "30s",
    external_account: { key_id: "k", mac_key: "bWFj" },
    challenges: {
      http: { alternate_port: 8080 },
      "tls-alpn": { disabled: true },
      bind_host: "127.0.0.1",
    },
    preferred_chains: { root_common_name: ["ISRG Root X1"] },
  }, "issuer");
  assert.equal(full.timeoutMs, 30_000);
  assert.deepEqual(full.challengeTypes, ["http-01"]);
  assert.equal(full.httpPort, 8080);
  assert.equal(full.bindHost, "127.0.0.1");
  assert.deepEqual(full.externalAccount, { keyId: "k", macKey: "bWFj" });
  assert.deepEqual(full.preferredChains, {
    smallest: undefined,
    rootCommonName: ["ISRG Root X1"],
    anyCommonName: [],
  });
  // DNS-01: Caddy's fields; the only challenge used when configured.
  const dns = parseAcmeIssuerConfig({
    module: "acme",
    challenges: {
      dns: {
        provider: { name: "mock" },
        ttl: "2m",
        propagation_delay: 310000000000,
        propagation_timeout: -1,
        resolvers: ["1.1.1.1", "127.0.0.1:8053", "[::1]:53"],
        override_domain: "delegated.example.net",
      },
    },
    preferred_chains: { smallest: false, any_common_name: ["A", "B"] },
  }, "issuer");
  assert.deepEqual(dns.challengeTypes, ["dns-01"]);
  assert.deepEqual(dns.dns, {
    providerRaw: { name: "mock" },
    ttlMs: 120_000,
    propagationDelayMs: 310_000,
    propagationTimeoutMs: -1,
    resolvers: [
      { ipAddr: "1.1.1.1", port: 53 },
      { ipAddr: "127.0.0.1", port: 8053 },
      { ipAddr: "::1", port: 53 },
    ],
    overrideDomain: "delegated.example.net",
  });
  assert.deepEqual(dns.preferredChains, {
    smallest: false,
    rootCommonName: [],
    anyCommonName: ["A", "B"],
  });
  const refused: [Record<string, unknown>, RegExp][] = [
    [{ ca: "http://ca.example/dir" }, /ca: an ACME directory must use https/],
    [{ ca: "nope" }, /ca: not a URL/],
    [
      { challenges: { dns: { resolvers: ["dns.google"] } } },
      /challenges\.dns\.resolvers: "dns\.google" is not an IP address/,
    ],
    [{ challenges: { dns: { ttl: "soon" } } }, /challenges\.dns\.ttl: invalid duration/],
    [{ challenges: { dns: { zone: "x" } } }, /challenges\.dns: unknown field "zone"/],
    [
      { challenges: { http: { disabled: true }, "tls-alpn": { disabled: true } } },
      /every challenge type is disabled/,
    ],
    [{ challenges: { http: { alternate_port: 70000 } } }, /alternate_port: must be a port number/],
    [{ external_account: { key_id: "k" } }, /key_id and mac_key are both required/],
    [{ preferred_chains: { smallest: "yes" } }, /preferred_chains\.smallest: must be a boolean/],
    [{ preferred_chains: { root_common_name: "X" } }, /root_common_name: must be an array/],
    [
      { trusted_roots_pem_files: ["/nonexistent/root.pem"] },
      /cannot read \/nonexistent\/root\.pem/,
    ],
    [{ account_key: "not a key" }, /account_key: must be a PEM private key/],
    [{ acme_timeout: "soon" }, /acme_timeout: invalid duration/],
    [{ emali: "typo@example.com" }, /unknown field "emali"/],
    [{ challenges: { http: { port: 80 } } }, /challenges\.http: unknown field "port"/],
  ];
  for (const [raw, re] of refused) {
    assert.throws(() => parseAcmeIssuerConfig({ module: "acme", ...raw }, "issuer"), re);
  }
  // Plain http is allowed for a CA on loopback (test CAs).
  assert.equal(
    parseAcmeIssuerConfig({ module: "acme", ca: "http://127.0.0.1:14000/dir" }, "i").ca,
    "http://127.0.0.1:14000/dir",
  );
});

Deno.test("HTTP-01: a challenge another instance stored is answered before the routes, for its host only", async () => {
  const port = freePort();
  const ca = "https://127.0.0.1:1/dir"; // never contacted: nothing is managed
  const server = await tlsServer({
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            routes: [{ handle: [{ handler: "static_response", body: "route", status_code: 404 }] }],
          },
        },
      },
      tls: {
        automation: {
          policies: [{ subjects: ["nothing.test"], issuers: [{ module: "acme", ca }] }],
        },
      },
    },
  });
  try {
    const key = `${server.storage}/acme/${issuerKey(ca).replace(":", "-")}/challenge_tokens`;
    await Deno.mkdir(key, { recursive: true });
    await Deno.writeTextFile(
      `${key}/x.test.json`,
      JSON.stringify({ type: "http-01", token: "tok_EN-1", keyAuthorization: "tok_EN-1.thumb" }),
    );
    const get = async (host: string, path: string, method = "GET") => {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.write(new TextEncoder().encode(
        `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      ));
      const text = new TextDecoder().decode(
        (await new Response(c.readable).arrayBuffer()) as ArrayBuffer,
      );
      return { status: Number(text.split(" ")[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) };
    };
    const ok = await get(`x.test:${port}`, "/.well-known/acme-challenge/tok_EN-1");
    assert.equal(ok.status, 200);
    assert.equal(ok.body, "tok_EN-1.thumb");
    // Another host (DNS rebinding), another token, a POST: not answered, the routes run.
    for (
      const [host, path, method] of [
        ["y.test", "/.well-known/acme-challenge/tok_EN-1", "GET"],
        ["x.test", "/.well-known/acme-challenge/other", "GET"],
        ["x.test", "/.well-known/acme-challenge/tok_EN-1", "POST"],
        ["x.test", "/.well-known/acme-challenge/", "GET"],
      ]
    ) {
      const r = await get(host, path, method);
      assert.equal(r.status, 404, `${method} ${host}${path}`);
      assert.equal(r.body, "route");
    }
  } finally {
    await server.stop();
  }
});

Deno.test("acme issuer: an unreachable CA is named with the network error", async () => {
  const { AcmeIssuer } = await import("../../../lib/server/tls/issuers/acme.ts");
  const { fileStorage } = await import("../../../lib/server/storage/file_system.ts");
  const { generateKey } = await import("../../../lib/server/pki/x509.ts");
  const dir = await Deno.makeTempDir();
  const port = freePort(); // nothing listens there
  const quiet = {
    name: "q",
    debug() {},
    info() {},
    warn() {},
    error() {},
    named: () => quiet,
    enabled: () => false,
  };
  const issuer = new AcmeIssuer(
    parseAcmeIssuerConfig({ module: "acme", ca: `https://127.0.0.1:${port}/dir` }, "i"),
    fileStorage(dir),
    quiet,
  );
  try {
    await assert.rejects(
      issuer.issue({ names: ["a.test"], key: await generateKey() }),
      new RegExp(`the ACME CA at https://127\\.0\\.0\\.1:${port} did not answer \\(ECONNREFUSED`),
    );
    assert.equal(await fileStorage(dir).exists("acme"), false, "no account was stored");
  } finally {
    issuer.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
