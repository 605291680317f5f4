/**
 * The `zerossl` issuer's ACME form (Caddy 2.6's): a server gets certificates from an ACME CA
 * that requires External Account Binding (Pebble with `externalAccountBindingRequired`), the
 * credentials fetched from ZeroSSL's API (a local stand-in) with the API key or for the e-mail
 * address, once per account; a wrong API key is logged clearly and nothing is registered.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, rootFile, waitFor } from "./_server.ts";
import { startFakeZeroSsl } from "./_zerossl_api.ts";

const API_KEY = "acme-form-key-3c9a";
const EAB = {
  keyId: "zerossl-kid-1",
  macKey: "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W",
};

Deno.test("zerossl server (ACME form): EAB from ZeroSSL's API by key and by email, Pebble issues, the account is reused; a wrong key is logged", async () => {
  const pebble = await startPebble({ eab: { [EAB.keyId]: EAB.macKey } });
  const api = await startFakeZeroSsl({
    apiKey: API_KEY,
    eab: EAB,
    httpPort: pebble.httpPort,
    dns: { ipAddr: "127.0.0.1", port: Number(pebble.dnsAddress.split(":")[1]) },
  });
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const log = `${dir}/server.log`;
  const wrongKey = "wrong-acme-key-d41e";
  const acme = (extra: Record<string, unknown>) => ({
    module: "zerossl",
    api_url: api.url,
    ca: pebble.directory,
    trusted_roots_pem_files: [pebble.tlsRootFile],
    challenges: { "tls-alpn": { disabled: true } },
    ...extra,
  });
  const names = ["key1.test", "key2.test", "mail.test", "wrong.test"];
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: {
        http_port: pebble.httpPort,
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${https}`],
            routes: names.map((h) => ({
              match: [{ host: [h] }],
              handle: [{ handler: "static_response", body: `hello ${h}` }],
            })),
          },
        },
      },
      tls: {
        automation: {
          policies: [
            { subjects: ["key1.test", "key2.test"], issuers: [acme({ api_key: API_KEY })] },
            { subjects: ["mail.test"], issuers: [acme({ email: "ops@example.com" })] },
            {
              subjects: ["wrong.test"],
              issuers: [acme({ api_key: wrongKey, email: "wrong@example.com" })],
            },
          ],
        },
      },
    },
  });
  try {
    const root = await rootFile(pebble, dir);
    for (const name of ["key1.test", "key2.test", "mail.test"]) {
      const got = await waitFor(
        async () => {
          const c = await servedCert(https, name);
          return c?.names.includes(name) ? c : null;
        },
        60_000,
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
    // Pebble bound the accounts to the credentials ZeroSSL's API handed out.
    assert.match(
      pebble.log(),
      new RegExp(`Successful newAccount Binding with CA using kid "${EAB.keyId}"`),
    );
    // One account for the key (two names, asked once), one for the e-mail address.
    const byKey = api.requests.filter((r) => r.path === "/acme/eab-credentials");
    assert.equal(byKey.filter((r) => r.key === "good").length, 1, JSON.stringify(api.requests));
    assert.deepEqual(api.eabEmails, ["ops@example.com"]);
    assert.ok(
      api.requests.filter((r) => r.path === "/acme/eab-credentials-email").every((r) =>
        r.key === "none"
      ),
    );
    // ACME form: the CA's storage key, not ZeroSSL's API's.
    const key = `127.0.0.1-${new URL(pebble.directory).port}-dir`;
    await Deno.stat(`${server.storage}/certificates/${key}/key1.test/key1.test.crt`);
    // The wrong key: a clear, logged error, no account at the CA.
    const failed = await waitFor(
      async () =>
        (await logEntries(log)).find((e) =>
          e.msg === "could not get certificate" && e.identifier === "wrong.test"
        ),
      30_000,
      "the wrong key's failure",
    );
    assert.match(
      String(failed.error),
      /getting EAB credentials from ZeroSSL with the API key: the ZeroSSL API refused POST \/acme\/eab-credentials: invalid_access_key \(code 101, HTTP 200\); check api_key/,
    );
    assert.ok(!(await Deno.readTextFile(log)).includes(wrongKey), "the key was logged");
    const entries = await logEntries(log);
    assert.ok(
      entries.some((e) =>
        e.msg === "generated EAB credentials" && e.key_id === EAB.keyId &&
        e.logger === "tls.issuance.zerossl"
      ),
    );
    assert.equal(await servedCert(https, "wrong.test"), null);
  } finally {
    await server.stop();
    await api.stop();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
