/**
 * `acme_server`: Gatehouse's local CA answering ACME to a real client (npm acme-client).
 * dns-01 is validated against TXT records in pebble-challtestsrv (the `resolvers` option),
 * http-01 against a responder on port 80 of 127.0.0.1 (when that port is free); the
 * certificate is signed by the CA's intermediate (or root with `sign_with_root`) for the
 * configured lifetime; the policy refuses names by allow/deny rules; malformed requests get
 * ACME problem documents.
 */
import assert from "node:assert/strict";
import acme from "acme-client";
import { x509 } from "../../../lib/server/pki/x509.ts";
import { startHttp } from "../http/harness.ts";
import { challtestsrvAvailable, startChallTestSrv } from "./dns_servers.ts";

const lib = await x509();

function certs(pem: string) {
  return pem.split(/(?<=-----END CERTIFICATE-----)\s*/).filter((p) => p.includes("BEGIN"))
    .map((p) => new lib.X509Certificate(p.trim()));
}

async function newClient(url: string) {
  return new acme.Client({
    directoryUrl: url,
    accountKey: await acme.crypto.createPrivateEcdsaKey(),
    backoffAttempts: 20,
    backoffMin: 100,
    backoffMax: 500,
  });
}

Deno.test({
  name:
    "acme_server issues to acme-client: dns-01 via challtestsrv, http-01 on port 80, policy, lifetime, sign_with_root",
  ignore: !challtestsrvAvailable(),
  async fn(t) {
    const dns = await startChallTestSrv();
    const resolvers = [`127.0.0.1:${dns.dnsPort}`];
    const storage = await Deno.makeTempDir({ prefix: "gatehouse-acme-server-" });
    const srv = await startHttp({
      servers: {
        srv0: {
          listen: ["127.0.0.1:0"],
          routes: [
            {
              match: [{ path: ["/root/*"] }],
              handle: [{
                handler: "acme_server",
                ca: "local",
                path_prefix: "/root/",
                sign_with_root: true,
                lifetime: "1h",
                resolvers,
                challenges: ["dns-01"],
              }],
            },
            {
              match: [{ path: ["/web/*"] }],
              handle: [{
                handler: "acme_server",
                path_prefix: "/web/",
                challenges: ["http-01"],
                policy: { allow: { domains: ["localhost"] } },
              }],
            },
            {
              handle: [{
                handler: "acme_server",
                resolvers,
                challenges: ["dns-01"],
                policy: {
                  allow: { domains: ["*.test.internal", "app.test.internal"] },
                  deny: { domains: ["evil.test.internal"] },
                },
              }],
            },
          ],
        },
      },
    }, { storage: { module: "file_system", root: storage } });
    const ca = await (await srv.admin("/pki/ca/local")).json() as {
      root_certificate: string;
      intermediate_certificate: string;
    };
    const root = new lib.X509Certificate(ca.root_certificate);
    const inter = new lib.X509Certificate(ca.intermediate_certificate);
    const dnsFlow = async (client: acme.Client, names: string[]) => {
      const [, csr] = await acme.crypto.createCsr({ commonName: names[0], altNames: names });
      return await client.auto({
        csr,
        termsOfServiceAgreed: true,
        challengePriority: ["dns-01"],
        skipChallengeVerification: true,
        challengeCreateFn: async (authz, _ch, keyAuthorization) => {
          await dns.setTxt(`_acme-challenge.${authz.identifier.value}`, keyAuthorization);
        },
        challengeRemoveFn: async (authz) => {
          await dns.setTxt(`_acme-challenge.${authz.identifier.value}`, "");
        },
      });
    };
    try {
      await t.step("dns-01: a certificate for two names, signed by the intermediate", async () => {
        const dir = await (await fetch(`${srv.url()}/acme/local/directory`)).json();
        assert.equal(dir.newNonce, `${srv.url()}/acme/local/new-nonce`);
        const client = await newClient(`${srv.url()}/acme/local/directory`);
        const pem = await dnsFlow(client, ["app.test.internal", "api.test.internal"]);
        const [leaf, issuer] = certs(pem);
        const san = leaf.getExtension(lib.SubjectAlternativeNameExtension)!;
        assert.deepEqual(san.names.items.map((n) => n.value).sort(), [
          "api.test.internal",
          "app.test.internal",
        ]);
        assert.equal(issuer.subject, inter.subject);
        assert.ok(await leaf.verify({ publicKey: inter.publicKey, signatureOnly: true }));
        const hours = (leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 3_600_000;
        assert.ok(hours > 11.9 && hours <= 12, `default lifetime 12h, got ${hours}`);
        // the account's orders list it
        const acct = await client.createAccount({ onlyReturnExisting: true });
        assert.equal(acct.status, "valid");
      });

      await t.step("policy: denied and unlisted names are rejected identifiers", async () => {
        const client = await newClient(`${srv.url()}/acme/local/directory`);
        await client.createAccount({ termsOfServiceAgreed: true });
        for (const name of ["evil.test.internal", "other.example", "*.test.internal"]) {
          await assert.rejects(
            client.createOrder({ identifiers: [{ type: "dns", value: name }] }),
            /denied|not allowed/,
            name,
          );
        }
      });

      await t.step("a wrong TXT record fails the challenge and the order", async () => {
        const client = await newClient(`${srv.url()}/acme/local/directory`);
        await client.createAccount({ termsOfServiceAgreed: true });
        const order = await client.createOrder({
          identifiers: [{ type: "dns", value: "bad.test.internal" }],
        });
        const [authz] = await client.getAuthorizations(order);
        const ch = authz.challenges.find((c) => c.type === "dns-01")!;
        await dns.setTxt("_acme-challenge.bad.test.internal", "not-the-digest");
        await client.completeChallenge(ch);
        await assert.rejects(client.waitForValidStatus(ch), /invalid|digest/);
        const after = await client.getOrder(order);
        assert.equal(after.status, "invalid");
      });

      await t.step("sign_with_root and lifetime 1h", async () => {
        const client = await newClient(`${srv.url()}/root/local/directory`);
        const pem = await dnsFlow(client, ["root.test.internal"]);
        const [leaf, issuer] = certs(pem);
        assert.equal(issuer.subject, root.subject);
        assert.ok(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true }));
        const hours = (leaf.notAfter.getTime() - leaf.notBefore.getTime()) / 3_600_000;
        assert.ok(hours > 0.99 && hours <= 1, `lifetime 1h, got ${hours}`);
      });

      let port80: Deno.HttpServer | null = null;
      const tokens = new Map<string, string>();
      try {
        port80 = Deno.serve({ hostname: "127.0.0.1", port: 80, onListen() {} }, (req) => {
          const token = new URL(req.url).pathname.split("/").pop()!;
          const v = tokens.get(token);
          return new Response(v ?? "no", { status: v ? 200 : 404 });
        });
      } catch { /* port 80 in use: the step below is skipped */ }
      await t.step({
        name: "http-01: the key authorization served on port 80",
        ignore: port80 === null,
        async fn() {
          const client = await newClient(`${srv.url()}/web/local/directory`);
          const [, csr] = await acme.crypto.createCsr({ commonName: "localhost" });
          const pem = await client.auto({
            csr,
            termsOfServiceAgreed: true,
            challengePriority: ["http-01"],
            skipChallengeVerification: true,
            challengeCreateFn: (_a, ch, keyAuthorization) => {
              tokens.set(ch.token, keyAuthorization);
              return Promise.resolve();
            },
            challengeRemoveFn: (_a, ch) => Promise.resolve(tokens.delete(ch.token)),
          });
          const [leaf] = certs(pem);
          assert.deepEqual(
            leaf.getExtension(lib.SubjectAlternativeNameExtension)!.names.items.map((n) => n.value),
            ["localhost"],
          );
        },
      });
      await port80?.shutdown();

      await t.step("malformed requests get problem documents", async () => {
        let r = await fetch(`${srv.url()}/acme/local/new-account`, {
          method: "POST",
          headers: { "content-type": "application/jose+json" },
          body: "{}",
        });
        assert.equal(r.status, 400);
        assert.equal(r.headers.get("content-type"), "application/problem+json");
        assert.ok(r.headers.get("replay-nonce"));
        assert.equal((await r.json()).type, "urn:ietf:params:acme:error:malformed");
        r = await fetch(`${srv.url()}/acme/other/directory`);
        assert.equal(r.status, 404);
        await r.body?.cancel();
        r = await fetch(`${srv.url()}/acme/local/new-nonce`, { method: "HEAD" });
        assert.equal(r.status, 200);
        assert.ok(r.headers.get("replay-nonce"));
      });
    } finally {
      await srv.stop();
      await dns.stop();
      await Deno.remove(storage, { recursive: true });
    }
  },
});

Deno.test("acme_server config: unknown challenges, fields and a too long lifetime are refused", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ challenges: ["smtp-01"] }, /acme challenge "smtp-01" is not supported/],
    [{ bogus: 1 }, /unknown field "bogus"/],
    [
      { lifetime: "30d" },
      // Caddy's words (modules/caddypki/acmeserver/acmeserver.go, Provision)
      /certificate lifetime \(720h0m0s\) should be less than intermediate certificate lifetime \(168h0m0s\)/,
    ],
    [{ policy: { allow: { ip_ranges: ["nope"] } } }, /ip_ranges/],
  ];
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-acme-server-" });
  for (const [extra, re] of cases) {
    await assert.rejects(
      startHttp(
        {
          servers: {
            srv0: {
              listen: ["127.0.0.1:0"],
              routes: [{ handle: [{ handler: "acme_server", ...extra }] }],
            },
          },
        },
        { storage: { module: "file_system", root: storage } },
      ),
      re,
      JSON.stringify(extra),
    );
  }
  await Deno.remove(storage, { recursive: true });
});

/** A certificate for tls-alpn-01 (RFC 8737): the name alone and the acmeIdentifier digest. */
async function alpnCertificate(name: string, keyAuthorization: string) {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]) as CryptoKeyPair;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(keyAuthorization)),
  );
  const cert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new lib.SubjectAlternativeNameExtension([{ type: "dns", value: name }]),
      new lib.Extension("1.3.6.1.5.5.7.1.31", true, Uint8Array.from([0x04, 0x20, ...digest])),
    ],
  });
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${
    btoa(String.fromCharCode(...pkcs8)).replace(/.{64}/g, "$&\n")
  }\n-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString("pem") + "\n", key };
}

Deno.test("acme_server tls-alpn-01: validated against openssl s_server on port 443", async (t) => {
  // port 443 of 127.0.0.1 must be free for the responder
  try {
    Deno.listen({ hostname: "127.0.0.1", port: 443 }).close();
  } catch {
    await t.step({ name: "port 443 is in use: skipped", ignore: true, fn() {} });
    return;
  }
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-acme-server-" });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{
            handler: "acme_server",
            challenges: ["tls-alpn-01"],
            policy: { allow: { domains: ["localhost"] } },
          }],
        }],
      },
    },
  }, { storage: { module: "file_system", root: storage } });
  const children: Deno.ChildProcess[] = [];
  try {
    const client = await newClient(`${srv.url()}/acme/local/directory`);
    const [, csr] = await acme.crypto.createCsr({ commonName: "localhost" });
    const pem = await client.auto({
      csr,
      termsOfServiceAgreed: true,
      challengePriority: ["tls-alpn-01"],
      skipChallengeVerification: true,
      challengeCreateFn: async (_a, _ch, keyAuthorization) => {
        const { cert, key } = await alpnCertificate("localhost", keyAuthorization);
        await Deno.writeTextFile(`${storage}/alpn.crt`, cert);
        await Deno.writeTextFile(`${storage}/alpn.key`, key);
        const child = new Deno.Command("openssl", {
          args: [
            "s_server",
            "-accept",
            "127.0.0.1:443",
            "-cert",
            `${storage}/alpn.crt`,
            "-key",
            `${storage}/alpn.key`,
            "-alpn",
            "acme-tls/1",
            "-quiet",
          ],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
        children.push(child);
        for (let i = 0; i < 100; i++) {
          try {
            (await Deno.connect({ hostname: "127.0.0.1", port: 443 })).close();
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      },
      challengeRemoveFn: () => Promise.resolve(),
    });
    const [leaf] = certs(pem);
    assert.deepEqual(
      leaf.getExtension(lib.SubjectAlternativeNameExtension)!.names.items.map((n) => n.value),
      ["localhost"],
    );
  } finally {
    for (const c of children) {
      c.kill("SIGTERM");
      await c.status;
    }
    await srv.stop();
    await Deno.remove(storage, { recursive: true });
  }
});
