/**
 * The `zerossl` issuer's config (both of Caddy's forms, refusals with their reasons), the
 * `acme` issuer on ZeroSSL's directory, the parsers of bytes from the network (API answers,
 * validation requests) under fast-check, and validation files another instance stored,
 * answered by the http app before its routes for their host and path only.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { parseZeroSslIssuerConfig } from "../../../lib/server/tls/zerossl/config.ts";
import { parseApiResponse, ZeroSslApiError } from "../../../lib/server/tls/zerossl/response.ts";
import {
  answerFileValidation,
  presentFileValidation,
} from "../../../lib/server/tls/zerossl/validation.ts";
import { freePort, tlsServer } from "../tls/_helpers.ts";

const parse = (raw: Record<string, unknown>, env: Record<string, string> = {}) =>
  parseZeroSslIssuerConfig({ module: "zerossl", ...raw }, "issuer", () => "", (n) => env[n]);

Deno.test("zerossl config: the REST API form and the ACME form, with Caddy's fields", () => {
  const api = parse({ api_key: "k" });
  assert.deepEqual(api, {
    form: "api",
    apiKey: "k",
    apiUrl: "https://api.zerossl.com",
    validityDays: 0,
    listenHost: "",
    alternateHttpPort: undefined,
    cname: undefined,
  });
  const full = parse({
    api_key: "{env.ZS_KEY}",
    validity_days: 365,
    listen_host: "127.0.0.1",
    alternate_http_port: 8080,
    cname_validation: { ttl: 620000000000, propagation_timeout: -1, resolvers: ["1.1.1.1"] },
  }, { ZS_KEY: "from-env" });
  assert.equal(full.form, "api");
  if (full.form !== "api") return;
  assert.equal(full.apiKey, "from-env");
  assert.equal(full.validityDays, 365);
  assert.equal(full.alternateHttpPort, 8080);
  assert.equal(full.cname?.ttlMs, 620_000);
  assert.equal(full.cname?.propagationTimeoutMs, -1);
  assert.deepEqual(full.cname?.resolvers, [{ ipAddr: "1.1.1.1", port: 53 }]);
  // ACME: an e-mail, or an API key beside any acme field; ca defaults to ZeroSSL's directory.
  const mail = parse({ email: "me@example.com" });
  assert.equal(mail.form, "acme");
  if (mail.form !== "acme") return;
  assert.equal(mail.acme.ca, "https://acme.zerossl.com/v2/DV90");
  assert.equal(mail.acme.email, "me@example.com");
  assert.equal(mail.apiKey, undefined);
  const keyed = parse({ api_key: "k", ca: "http://127.0.0.1:14000/dir", acme_timeout: "30s" });
  assert.equal(keyed.form, "acme");
  if (keyed.form !== "acme") return;
  assert.equal(keyed.apiKey, "k");
  assert.equal(keyed.acme.ca, "http://127.0.0.1:14000/dir");
  assert.equal(keyed.acme.timeoutMs, 30_000);
  const eab = parse({ external_account: { key_id: "a", mac_key: "b" } });
  assert.equal(eab.form, "acme");
  assert.equal(
    parse({ api_key: "k", api_url: "http://127.0.0.1:9/" }).apiUrl,
    "http://127.0.0.1:9",
  );
});

Deno.test("zerossl config: refusals name the field and what to do", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{}, /set api_key .*, email .* or external_account/],
    [{ validity_days: 90 }, /api_key: required for ZeroSSL's REST API \(validity_days\)/],
    [
      { api_key: "k", email: "a@b.c", cname_validation: {} },
      /cname_validation \(ZeroSSL's REST API\) and email \(ZeroSSL's ACME endpoint\) cannot be mixed/,
    ],
    [{ api_key: "k", nope: 1 }, /issuer: unknown field "nope"/],
    [{ api_key: 5 }, /api_key: must be a string/],
    [{ api_key: "{env.ZS_UNSET}" }, /api_key: "\{env\.ZS_UNSET\}" is empty once placeholders/],
    [
      { api_key: "k", api_url: "http://api.example.com" },
      /api_url: the ZeroSSL API must use https/,
    ],
    [{ api_key: "k", api_url: "::" }, /api_url: not a URL/],
    [{ api_key: "k", validity_days: 1.5 }, /validity_days: must be a whole number of days/],
    [{ api_key: "k", alternate_http_port: 70000 }, /alternate_http_port: must be a port number/],
    [{ api_key: "k", listen_host: 1 }, /listen_host: must be a string/],
    [{ api_key: "k", cname_validation: [] }, /cname_validation: must be an object/],
    [
      { api_key: "k", cname_validation: { override_domain: "x.example.com" } },
      /cname_validation\.override_domain: ZeroSSL names the CNAME record/,
    ],
    [{ api_key: "k", cname_validation: { bogus: 1 } }, /cname_validation: unknown field "bogus"/],
    [{ email: "a@b.c", ca: "http://acme.example.com/dir" }, /ca: an ACME directory must use https/],
  ];
  for (const [raw, re] of cases) {
    assert.throws(() => parse(raw), re, JSON.stringify(raw));
  }
});

const policy = (issuer: Record<string, unknown>, tls: Record<string, unknown> = {}) => ({
  apps: {
    tls: { ...tls, automation: { policies: [{ subjects: ["a.example.com"], issuers: [issuer] }] } },
  },
});

Deno.test("zerossl config: loads through validate; ZeroSSL's ACME directory needs an email or EAB", async () => {
  await validateConfig(policy({ module: "zerossl", api_key: "k" }));
  await validateConfig(policy({ module: "zerossl", email: "ops@example.com" }));
  await validateConfig(
    policy({ module: "acme", ca: "https://acme.zerossl.com/v2/DV90", email: "ops@example.com" }),
  );
  await assert.rejects(
    validateConfig(policy({ module: "acme", ca: "https://acme.zerossl.com/v2/DV90" })),
    /ZeroSSL's ACME directory needs External Account Binding: set email .* or external_account/,
  );
  // CNAME validation needs a DNS provider: its own, or the tls app's.
  await assert.rejects(
    validateConfig(policy({ module: "zerossl", api_key: "k", cname_validation: { ttl: "5m" } })),
    /issuer\.cname_validation: CNAME validation enabled, but no DNS provider configured/,
  );
  await validateConfig(
    policy({ module: "zerossl", api_key: "k", cname_validation: { ttl: "5m" } }, {
      dns: { name: "challtestsrv" },
    }),
  );
  await assert.rejects(
    validateConfig(
      policy({ module: "zerossl", api_key: "k", cname_validation: { provider: { name: "nope" } } }),
    ),
    /issuer\.cname_validation\.provider: .*nope/,
  );
});

Deno.test("zerossl API answers: arbitrary bytes parse to an object or a named error, never anything else", () => {
  const json = fc.oneof(
    fc.json(),
    fc.record({
      success: fc.oneof(fc.boolean(), fc.constantFrom(0, 1, "0", "1", "yes")),
      error: fc.oneof(
        fc.constant(undefined),
        fc.string(),
        fc.record({
          code: fc.oneof(fc.integer(), fc.string()),
          type: fc.string(),
          details: fc.jsonValue(),
        }),
      ),
    }).map((o) => JSON.stringify(o)),
  ).map((s) => new TextEncoder().encode(s));
  const bytes = fc.oneof(json, fc.uint8Array({ maxLength: 256 }));
  fc.assert(
    fc.property(bytes, fc.integer({ min: 100, max: 599 }), (b, status) => {
      try {
        const out = parseApiResponse(b, status, "GET /x");
        assert.equal(typeof out, "object");
        assert.ok(out !== null && !Array.isArray(out));
        assert.ok(status >= 200 && status < 300);
        assert.ok(out.success !== false && out.success !== 0);
      } catch (e) {
        assert.ok(e instanceof Error, String(e));
        assert.match((e as Error).message, /the ZeroSSL API/);
        if (e instanceof ZeroSslApiError) assert.ok(Number.isFinite(e.apiCode));
        assert.ok((e as Error).message.length < 4000);
      }
    }),
    { numRuns: 2000, interruptAfterTimeLimit: 20_000 },
  );
});

Deno.test("zerossl validation requests: arbitrary paths, hosts and methods never throw; only the exact one is answered", async () => {
  const stop = await presentFileValidation({
    name: "v.test",
    url: "http://v.test/.well-known/pki-validation/ABC123.txt",
    content: "line1\nsectigo.com\nunique",
  });
  try {
    const ok = await answerFileValidation(
      new Request("http://v.test:8080/.well-known/pki-validation/ABC123.txt"),
    );
    assert.equal(await ok?.text(), "line1\nsectigo.com\nunique");
    assert.equal(ok?.headers.get("content-type"), "text/plain");
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constant("/.well-known/pki-validation/ABC123.txt"),
          fc.string().map((s) => `/.well-known/pki-validation/${s}`),
          fc.string(),
        ),
        fc.oneof(fc.constant("v.test"), fc.constant("V.TEST:80"), fc.string()),
        fc.constantFrom("GET", "POST", "HEAD", "PUT"),
        async (path, host, method) => {
          const req = new Request("http://x.invalid/", { method, headers: { host: "x" } });
          req.headers.set("host", host.replace(/[^\x21-\x7e]/g, "") || "x");
          const res = await answerFileValidation(req, path);
          const exact = path === "/.well-known/pki-validation/ABC123.txt" && method === "GET" &&
            /^v\.test(:\d+)?$/i.test(req.headers.get("host")!);
          assert.equal(res !== undefined, exact, `${method} ${host} ${path}`);
        },
      ),
      { numRuns: 1000, interruptAfterTimeLimit: 20_000 },
    );
  } finally {
    await stop();
  }
});

Deno.test("zerossl validation: a file another instance stored is answered before the routes, for its host and path only", async () => {
  const port = freePort();
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
          // Never contacted: nothing is managed, the issuer only reads shared validations.
          policies: [{
            subjects: ["nothing.test"],
            issuers: [{ module: "zerossl", api_key: "k", api_url: "http://127.0.0.1:1" }],
          }],
        },
      },
    },
  });
  try {
    const dir = `${server.storage}/zerossl/challenge_tokens`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/x.test.json`,
      JSON.stringify({
        url: "http://x.test/.well-known/pki-validation/F00D.txt",
        token: "hash\nsectigo.com\nu1",
        identifier: { type: "dns", value: "x.test" },
      }),
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
    const ok = await get(`x.test:${port}`, "/.well-known/pki-validation/F00D.txt");
    assert.equal(ok.status, 200);
    assert.equal(ok.body, "hash\nsectigo.com\nu1");
    for (
      const [host, path, method] of [
        ["y.test", "/.well-known/pki-validation/F00D.txt", "GET"],
        ["x.test", "/.well-known/pki-validation/OTHER.txt", "GET"],
        ["x.test", "/.well-known/pki-validation/F00D.txt", "POST"],
        ["x.test", "/.well-known/pki-validation/", "GET"],
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

Deno.test("zerossl validation: a shared storage keeps being read while any issuer on it runs (reload)", async () => {
  const { addValidationSource } = await import(
    "../../../lib/server/tls/zerossl/validation.ts"
  );
  const { fileStorage } = await import("../../../lib/server/storage/file_system.ts");
  const dir = await Deno.makeTempDir();
  try {
    const storage = fileStorage(dir);
    await storage.store(
      "zerossl/challenge_tokens/r.test.json",
      new TextEncoder().encode(JSON.stringify({
        url: "http://r.test/.well-known/pki-validation/R.txt",
        token: "shared",
        identifier: { value: "r.test" },
      })),
    );
    const ask = () =>
      answerFileValidation(new Request("http://r.test/.well-known/pki-validation/R.txt"));
    assert.equal(await ask(), undefined, "no issuer reads that storage yet");
    const oldConfig = addValidationSource(storage);
    const newConfig = addValidationSource(storage); // the reloaded config's issuer
    oldConfig(); // the old config is cleaned up after the swap
    oldConfig();
    assert.equal(await (await ask())?.text(), "shared");
    newConfig();
    assert.equal(await ask(), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
