/**
 * Properties of the other parsers of network bytes added with these modules: the ACME
 * server's request bodies (any JSON, JWS-shaped objects with arbitrary or mismatched parts)
 * always get a 4xx problem document with a fresh nonce, never a 5xx or a hang; a client's
 * certificate chain of arbitrary bytes is refused with a reason, never an exception.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startHttp } from "../http/harness.ts";
import { provisionClientAuth } from "../../../lib/server/tls/client_auth/mod.ts";
import type { ProvisionContext } from "../../../lib/server/module/mod.ts";
import { makeClientPki } from "./client_pki.ts";

const b64url = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

Deno.test("acme_server: arbitrary request bodies get 4xx problem documents, never 5xx", async () => {
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-acme-prop-" });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{ handle: [{ handler: "acme_server", challenges: ["dns-01"] }] }],
      },
    },
  }, { storage: { module: "file_system", root: storage } });
  const base = `${srv.url()}/acme/local`;
  const nonce = async () =>
    (await fetch(`${base}/new-nonce`, { method: "HEAD" })).headers.get("replay-nonce")!;
  const endpoint = fc.constantFrom(
    "new-account",
    "new-order",
    "account/x",
    "order/abc",
    "order/abc/finalize",
    "authz/abc",
    "challenge/a/b",
    "certificate/x",
    "revoke-cert",
    "key-change",
    "nope",
  );
  const header = fc.record({
    alg: fc.oneof(fc.constantFrom("ES256", "RS256", "none", "HS256"), fc.string()),
    nonce: fc.oneof(fc.constant("USE_REAL"), fc.string()),
    url: fc.oneof(fc.constant("USE_URL"), fc.webUrl()),
    jwk: fc.option(fc.oneof(
      fc.constant({ kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" }),
      fc.dictionary(fc.string(), fc.string()),
    )),
    kid: fc.option(fc.oneof(fc.constant(`${base}/account/x`), fc.string())),
  }, { requiredKeys: ["alg"] });
  const body = fc.oneof(
    fc.string(),
    fc.json(),
    fc.record({
      protected: fc.oneof(fc.base64String(), header.map((h) => b64url(JSON.stringify(h)))),
      payload: fc.oneof(fc.constant(""), fc.json().map((j) => b64url(j)), fc.string()),
      signature: fc.oneof(fc.base64String(), fc.string()),
    }).map((o) => JSON.stringify(o)),
  );
  try {
    await fc.assert(
      fc.asyncProperty(endpoint, body, async (path, raw) => {
        const url = `${base}/${path}`;
        let sent = raw;
        if (raw.startsWith('{"protected"')) {
          // give some bodies a live nonce and the right URL so later checks are reached
          const o = JSON.parse(raw);
          try {
            const h = JSON.parse(atob(o.protected.replace(/-/g, "+").replace(/_/g, "/")));
            if (h.nonce === "USE_REAL") h.nonce = await nonce();
            if (h.url === "USE_URL") h.url = url;
            o.protected = b64url(JSON.stringify(h));
          } catch { /* not a header: sent as is */ }
          sent = JSON.stringify(o);
        }
        const r = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/jose+json" },
          body: sent,
          signal: AbortSignal.timeout(10_000),
        });
        const doc = await r.json();
        assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status} ${JSON.stringify(doc)}`);
        assert.equal(r.headers.get("content-type"), "application/problem+json");
        assert.match(doc.type, /^urn:ietf:params:acme:error:/);
        assert.ok(r.headers.get("replay-nonce"));
      }),
      { numRuns: 150 },
    );
  } finally {
    await srv.stop();
    await Deno.remove(storage, { recursive: true });
  }
});

Deno.test("client authentication: arbitrary certificate bytes are refused with a reason", async () => {
  const pki = await makeClientPki();
  const ctx = {} as ProvisionContext;
  const verify = await provisionClientAuth(
    {
      ca: { provider: "inline", trusted_ca_certs: [pki.trustedCaDerB64] },
      mode: "require_and_verify",
    },
    "client_authentication",
    ctx,
  );
  const cert = fc.oneof(
    fc.uint8Array({ maxLength: 600 }),
    // a real certificate with bytes changed
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([i, x]) => {
      const d = pki.good.der.slice();
      d[i % d.length] ^= x;
      return d;
    }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(cert, { minLength: 1, maxLength: 3 }), async (chain) => {
      const why = await verify.check(chain);
      assert.equal(typeof why, "string");
    }),
    { numRuns: 200 },
  );
  assert.equal(await verify.check([pki.good.der]), null);
});

Deno.test("tls-alpn-01 probe: whatever a server answers, a TlsProbeError, never a hang", async () => {
  const { probeTls13, TlsProbeError } = await import(
    "../../../lib/server/http/handlers/acme_server/tls13_probe.ts"
  );
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let answer: Uint8Array[] = [];
  (async () => {
    for await (const conn of listener) {
      (async () => {
        try {
          await conn.read(new Uint8Array(4096)); // the ClientHello
          for (const a of answer) await conn.write(a);
        } catch { /* the probe may close first */ }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  const record = (type: number, body: Uint8Array) =>
    new Uint8Array([type, 3, 3, body.length >> 8, body.length & 0xff, ...body]);
  const serverHello = fc.record({
    random: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    suite: fc.constantFrom(0x1301, 0x1302, 0x00ff),
    version: fc.constantFrom(0x0304, 0x0303),
    group: fc.constantFrom(0x001d, 0x0017, 0x0018),
    share: fc.uint8Array({ maxLength: 70 }),
  }).map((h) => {
    const exts = [
      0,
      43,
      0,
      2,
      h.version >> 8,
      h.version & 0xff,
      0,
      51,
      0,
      4 + h.share.length,
      h.group >> 8,
      h.group & 0xff,
      0,
      h.share.length,
      ...h.share,
    ];
    const body = [3, 3, ...h.random, 0, h.suite >> 8, h.suite & 0xff, 0, 0, exts.length, ...exts];
    return new Uint8Array([2, 0, body.length >> 8, body.length & 0xff, ...body]);
  });
  const answers = fc.oneof(
    fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 3 }),
    fc.tuple(serverHello, fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 3 })).map((
      [sh, rest],
    ) => [record(22, sh), ...rest.map((r) => record(23, r))]),
    fc.tuple(fc.constantFrom(20, 21, 22, 23, 24), fc.uint8Array({ maxLength: 100 })).map((
      [t, b],
    ) => [record(t, b)]),
  );
  try {
    await fc.assert(
      fc.asyncProperty(answers, async (a) => {
        answer = a;
        await assert.rejects(probeTls13("127.0.0.1", port, "x.test", "acme-tls/1", 5000), (e) => {
          assert.ok(e instanceof TlsProbeError, String(e));
          return true;
        });
      }),
      { numRuns: 150 },
    );
  } finally {
    listener.close();
  }
});

Deno.test("client authentication: an ECDSA signature in a laxer encoding than DER is refused, as Go's ecdsa.VerifyASN1 refuses it", async () => {
  const pki = await makeClientPki();
  const verify = await provisionClientAuth(
    {
      ca: { provider: "inline", trusted_ca_certs: [pki.trustedCaDerB64] },
      mode: "require_and_verify",
    },
    "client_authentication",
    {} as ProvisionContext,
  );
  assert.equal(await verify.check([pki.good.der]), null);
  // the signature value is the certificate's last element: BIT STRING, no unused bits, then
  // the ECDSA SEQUENCE; the same r and s under another tag still converted to a valid signature
  const d = pki.good.der.slice();
  let at = -1;
  for (let i = d.length - 80; i < d.length - 3; i++) {
    if (d[i] === 0x03 && d[i + 2] === 0x00 && d[i + 3] === 0x30) at = i + 3;
  }
  assert.ok(at > 0, "the signature's SEQUENCE");
  d[at] ^= 0x80;
  assert.equal(typeof await verify.check([d]), "string");
});
