/**
 * `key_type` of automation policies: certificates of every key type (ed25519, p256, p384,
 * rsa2048, rsa4096) made by the internal issuer and served on both listener engines (curl
 * verifies each chain against the local CA's root), with the key in storage in the form
 * certmagic reads; the ACME issuer gets the key types from Pebble; an unknown type is refused
 * with the list.
 */
import assert from "node:assert/strict";
import { curl, freePort, tempFile, tlsServer } from "./_helpers.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { generateKeyOfType, KEY_TYPES, keyTypeOf } from "../../../lib/server/pki/key_types.ts";

const dec = new TextDecoder();

/** The public key algorithm of the leaf a handshake for `name` gets (openssl's words). */
async function servedKey(port: number, name: string): Promise<string> {
  const s = new Deno.Command("openssl", {
    args: ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", name],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await s.stdin.close();
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(
    dec.decode((await s.output()).stdout),
  )?.[0];
  if (!pem) return "";
  const x = new Deno.Command("openssl", {
    args: ["x509", "-noout", "-text"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const w = x.stdin.getWriter();
  await w.write(new TextEncoder().encode(pem));
  await w.close();
  const text = dec.decode((await x.output()).stdout);
  const alg = /Public Key Algorithm: (\S+)/.exec(text)?.[1] ?? "";
  const size = /Public-Key: \((\d+) bit\)/.exec(text)?.[1] ?? "";
  const curve = /NIST CURVE: (\S+)/.exec(text)?.[1] ?? "";
  return [alg, size, curve].filter(Boolean).join(" ");
}

const EXPECTED: Record<string, string> = {
  p256: "id-ecPublicKey 256 P-256",
  p384: "id-ecPublicKey 384 P-384",
  ed25519: "ED25519",
  rsa2048: "rsaEncryption 2048",
  rsa4096: "rsaEncryption 4096",
};

for (const engine of ["deno", "node"] as const) {
  Deno.test(`key_type (${engine} engine): internal certificates of every key type are served`, async () => {
    const port = freePort();
    const names = KEY_TYPES.map((t) => `${t}.localhost`);
    const srv = await tlsServer({
      apps: {
        http: {
          http_port: freePort(),
          https_port: port,
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              listener_engine: engine,
              routes: names.map((h) => ({
                match: [{ host: [h] }],
                handle: [{ handler: "static_response", body: `hi ${h}` }],
              })),
            },
          },
        },
        tls: {
          automation: {
            policies: KEY_TYPES.map((t) => ({
              subjects: [`${t}.localhost`],
              key_type: t,
              issuers: [{ module: "internal" }],
            })),
          },
        },
      },
    });
    const dir = await Deno.makeTempDir();
    try {
      const ca = await tempFile(dir, "root.pem", await srv.rootPem());
      for (const t of KEY_TYPES) {
        const name = `${t}.localhost`;
        const r = await curl(`https://${name}:${port}/`, {
          ca,
          resolve: `${name}:${port}:127.0.0.1`,
          // the first handshake waits for its certificate, and an RSA-4096 key can take more
          // than curl's usual 10 s to generate on a loaded machine
          extra: ["--max-time", "90"],
        });
        assert.equal(r.code, 0, `${t}: ${r.stderr}`);
        assert.equal(r.body, `hi ${name}`);
        assert.equal(await servedKey(port, name), EXPECTED[t], t);
        const key = await Deno.readTextFile(
          `${srv.storage}/certificates/local/${name}/${name}.key`,
        );
        const label = t.startsWith("p") ? "EC PRIVATE KEY" : "PRIVATE KEY";
        assert.ok(key.startsWith(`-----BEGIN ${label}-----`), `${t} key stored as ${label}`);
      }
    } finally {
      await srv.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("key_type: generated keys are of the type asked; an unknown type is refused with the list", async () => {
  for (const t of KEY_TYPES) {
    const k = await generateKeyOfType(t);
    assert.equal(keyTypeOf(k.keys.publicKey), t);
  }
  await assert.rejects(
    validateConfig({
      apps: {
        tls: {
          automation: { policies: [{ key_type: "rsa1024", issuers: [{ module: "internal" }] }] },
        },
      },
    }),
    /key_type: unknown key type "rsa1024"; use one of p256, p384, ed25519, rsa2048, rsa4096/,
  );
});
