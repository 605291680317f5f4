/**
 * The ACME issuer with keys of every type: the CSR is signed with the certificate's own key
 * (ECDSA P-256/P-384, Ed25519, RSA) and Pebble issues a certificate for that key.
 */
import assert from "node:assert/strict";
import { fileStorage } from "../../../lib/server/storage/file_system.ts";
import { AcmeIssuer } from "../../../lib/server/tls/issuers/acme.ts";
import { parseAcmeIssuerConfig } from "../../../lib/server/tls/issuers/acme_config.ts";
import { x509 as loadX509 } from "../../../lib/server/pki/x509.ts";
import { generateKeyOfType, KEY_TYPES } from "../../../lib/server/pki/key_types.ts";
import type { Logger } from "../../../lib/server/module/instance.ts";
import { startPebble } from "./_pebble.ts";

const x509 = await loadX509();
const quiet: Logger = {
  name: "q",
  debug() {},
  info() {},
  warn() {},
  error() {},
  named: () => quiet,
  enabled: () => false,
};

Deno.test("acme issuer: Pebble issues certificates for keys of every key_type", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const issuer = new AcmeIssuer(
    parseAcmeIssuerConfig({
      module: "acme",
      ca: pebble.directory,
      trusted_roots_pem_files: [pebble.tlsRootFile],
      challenges: {
        http: { alternate_port: pebble.httpPort },
        "tls-alpn": { disabled: true },
        bind_host: "127.0.0.1",
      },
    }, "issuer"),
    fileStorage(dir),
    quiet,
  );
  try {
    for (const t of KEY_TYPES) {
      const key = await generateKeyOfType(t);
      const { certificatePem } = await issuer.issue({ names: [`${t}.keys.test`], key });
      const leaf = new x509.X509Certificate(certificatePem);
      const served = new Uint8Array(leaf.publicKey.rawData);
      const mine = new Uint8Array(await crypto.subtle.exportKey("spki", key.keys.publicKey));
      assert.deepEqual(served, mine, `${t}: the certificate holds the key`);
    }
  } finally {
    issuer.cleanup();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
