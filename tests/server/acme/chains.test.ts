/**
 * `preferred_chains` against a real Pebble that offers alternate chains (each under another
 * root): `root_common_name` and `any_common_name` pick the chain by issuer name, and no
 * preference keeps the CA's default chain; `smallest` orders chains by size.
 */
import assert from "node:assert/strict";
import { fileStorage } from "../../../lib/server/storage/file_system.ts";
import { AcmeIssuer } from "../../../lib/server/tls/issuers/acme.ts";
import { parseAcmeIssuerConfig } from "../../../lib/server/tls/issuers/acme_config.ts";
import { generateKey, x509 as loadX509 } from "../../../lib/server/pki/x509.ts";
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

function issuers(chain: string): string[] {
  return (chain.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [])
    .map((b) => new x509.X509Certificate(b).issuerName.getField("CN")[0]);
}

function subjectCN(pem: string): string {
  return new x509.X509Certificate(pem).subjectName.getField("CN")[0];
}

Deno.test("preferred_chains: root_common_name and any_common_name choose among Pebble's chains", async () => {
  // Two alternate roots; chain length 3 puts two intermediates (different sizes) under each.
  const pebble = await startPebble({ alternateRoots: 2 });
  const dir = await Deno.makeTempDir();
  try {
    const roots = await Promise.all(
      [0, 1, 2].map(async (n) => subjectCN(await pebble.issuingRoot(n))),
    );
    assert.equal(new Set(roots).size, 3, `three distinct roots: ${roots}`);
    const issue = async (preferred?: Record<string, unknown>) => {
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
          ...(preferred ? { preferred_chains: preferred } : {}),
        }, "issuer"),
        fileStorage(dir),
        quiet,
      );
      try {
        const { certificatePem } = await issuer.issue({
          names: ["chains.test"],
          key: await generateKey(),
        });
        return issuers(certificatePem);
      } finally {
        issuer.cleanup();
      }
    };
    const top = (chain: string[]) => chain[chain.length - 1];
    const byDefault = await issue();
    assert.equal(top(byDefault), roots[0], "no preference: the default chain");
    for (const want of [roots[1], roots[2]]) {
      assert.equal(top(await issue({ root_common_name: ["No Such Root", want] })), want);
    }
    // any_common_name matches any issuer in a chain: the leaf's issuer (one intermediate name
    // in every chain Pebble offers) picks the first chain; a root's name picks its chain.
    assert.equal(top(await issue({ any_common_name: [byDefault[0]] })), roots[0]);
    assert.equal(top(await issue({ any_common_name: ["No Such CA", roots[1]] })), roots[1]);
    // No match: the first (default) chain.
    assert.equal(top(await issue({ root_common_name: ["No Such Root"] })), roots[0]);
  } finally {
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("preferred_chains: smallest true keeps the shortest chain, false the longest", async () => {
  const { selectChain } = await import("../../../lib/server/tls/acme/chains.ts");
  const chains = ["mid-size", "longest chain", "short"];
  const pick = (smallest?: boolean) =>
    selectChain(chains, { smallest, rootCommonName: [], anyCommonName: [] }, quiet);
  assert.equal(await pick(true), "short");
  assert.equal(await pick(false), "longest chain");
  assert.equal(await pick(undefined), "mid-size");
  assert.equal(
    await selectChain(["only"], { smallest: false, rootCommonName: [], anyCommonName: [] }, quiet),
    "only",
  );
});
