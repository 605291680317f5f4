/**
 * TLS fields the other suites do not set: the `storage` trust pool (`pem_keys`) of client
 * authentication, the `strict_sni_host` that client authentication turns on (as Caddy), the
 * connection policies' `default_sni` and `fallback_sni` (which certificate a handshake without
 * SNI gets when the listener's IP has none, or one with a name nothing covers), and the OCSP
 * fields refused at load
 * (`ocsp_interval`, `must_staple`, `ocsp_overrides`).
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import { startServer } from "../../../lib/server/embed.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { makePki } from "../http/pki.ts";
import { freePort } from "../http/harness.ts";
import { type ClientCert, makeClientPki } from "../parity2/client_pki.ts";

interface Answer {
  status: number;
  /** The subject alternative names of the certificate the server presented. */
  names: string;
}

/** One HTTPS GET with a chosen SNI (none for an IP), Host and client certificate. */
function get(
  port: number,
  o: { servername?: string; host: string; cert?: ClientCert },
): Promise<Answer | "refused"> {
  return new Promise((resolve) => {
    let data = "";
    let names = "";
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      ...(o.servername ? { servername: o.servername } : {}),
      rejectUnauthorized: false,
      ...(o.cert ? { cert: o.cert.cert, key: o.cert.key } : {}),
      ALPNProtocols: ["http/1.1"],
    });
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on("secureConnect", () => {
      names = socket.getPeerCertificate().subjectaltname ?? "";
      socket.write(`GET / HTTP/1.1\r\nHost: ${o.host}\r\nConnection: close\r\n\r\n`);
    });
    socket.on("data", (d: Uint8Array) => (data += new TextDecoder().decode(d)));
    const finish = () => {
      clearTimeout(timer);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      resolve(m ? { status: Number(m[1]), names } : "refused");
    };
    socket.on("close", finish);
    socket.on("error", () => {});
  });
}

Deno.test("client authentication: a storage trust pool (pem_keys); strict_sni_host on by default, insecure_off allowed", async () => {
  const pki = await makeClientPki();
  const storageRoot = await Deno.makeTempDir({ prefix: "gatehouse-tls-fields-" });
  // the file_system storage keeps a key at its path below the root
  await Deno.mkdir(`${storageRoot}/clients`);
  await Deno.writeTextFile(`${storageRoot}/clients/ca.pem`, pki.trustedCaPem);
  const run = async (extra: Record<string, unknown>) => {
    const port = freePort();
    const srv = await startServer({
      config: {
        admin: { disabled: true },
        storage: { module: "file_system", root: storageRoot },
        apps: {
          tls: {
            certificates: {
              load_pem: [{
                certificate: pki.server.leafs.local.cert,
                key: pki.server.leafs.local.key,
              }],
            },
          },
          http: {
            servers: {
              srv0: {
                listen: [`127.0.0.1:${port}`],
                tls_connection_policies: [{
                  client_authentication: {
                    ca: { provider: "storage", pem_keys: ["clients/ca.pem"] },
                  },
                }],
                routes: [{ handle: [{ handler: "static_response", body: "in" }] }],
                ...extra,
              },
            },
          },
        },
      },
    });
    return { port, stop: () => srv.stop() };
  };
  const s = await run({});
  try {
    const ok = await get(s.port, { servername: "localhost", host: "localhost", cert: pki.good });
    assert.equal(ok !== "refused" && ok.status, 200, "a client of the CA in storage gets in");
    assert.equal(
      await get(s.port, { servername: "localhost", host: "localhost", cert: pki.untrusted }),
      "refused",
      "a client of another CA is refused",
    );
    // client authentication turns strict_sni_host on: another Host than the SNI is misdirected
    const other = await get(s.port, {
      servername: "localhost",
      host: "secure.localhost",
      cert: pki.good,
    });
    assert.equal(other !== "refused" && other.status, 421);
  } finally {
    await s.stop();
  }
  const off = await run({ strict_sni_host: false });
  try {
    const other = await get(off.port, {
      servername: "localhost",
      host: "secure.localhost",
      cert: pki.good,
    });
    assert.equal(other !== "refused" && other.status, 200, "strict_sni_host false: answered");
  } finally {
    await off.stop();
    await Deno.remove(storageRoot, { recursive: true });
  }
});

Deno.test("connection policies: default_sni for clients without SNI, fallback_sni for names nothing covers", async () => {
  const pki = await makePki({
    one: { dns: ["one.test"] },
    two: { dns: ["two.test"] },
  });
  const port = freePort();
  const storageRoot = await Deno.makeTempDir({ prefix: "gatehouse-tls-fields-" });
  const srv = await startServer({
    config: {
      admin: { disabled: true },
      storage: { module: "file_system", root: storageRoot },
      apps: {
        tls: {
          certificates: {
            load_pem: [
              { certificate: pki.leafs.one.cert, key: pki.leafs.one.key },
              { certificate: pki.leafs.two.cert, key: pki.leafs.two.key },
            ],
          },
        },
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              tls_connection_policies: [{ default_sni: "two.test", fallback_sni: "one.test" }],
              routes: [{ handle: [{ handler: "static_response", body: "x" }] }],
            },
          },
        },
      },
    },
  });
  try {
    const none = await get(port, { host: "two.test" });
    assert.ok(none !== "refused" && none.names.includes("DNS:two.test"), JSON.stringify(none));
    const unknown = await get(port, { servername: "nothing.test", host: "nothing.test" });
    assert.ok(
      unknown !== "refused" && unknown.names.includes("DNS:one.test"),
      JSON.stringify(unknown),
    );
    const named = await get(port, { servername: "two.test", host: "two.test" });
    assert.ok(named !== "refused" && named.names.includes("DNS:two.test"), JSON.stringify(named));
  } finally {
    await srv.stop();
    await Deno.remove(storageRoot, { recursive: true });
  }
});

Deno.test("tls automation: OCSP fields are refused at load by name", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ocsp_interval: "1h" }, /tls\.automation\.ocsp_interval: OCSP is not used/],
    [{ policies: [{ must_staple: true }] }, /must_staple: OCSP Must-Staple is not supported/],
    [{ policies: [{ ocsp_overrides: { a: "b" } }] }, /ocsp_overrides: OCSP is not used/],
  ];
  for (const [automation, re] of cases) {
    await assert.rejects(
      validateConfig({ admin: { disabled: true }, apps: { tls: { automation } } }),
      re,
    );
  }
  // must_staple false is Caddy's default and loads
  await validateConfig({
    admin: { disabled: true },
    apps: { tls: { automation: { policies: [{ must_staple: false }] } } },
  });
});

Deno.test("client authentication: trusted_ca_certs_pem_files (legacy) and a leaf loader's files", async () => {
  const pki = await makeClientPki();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-tls-fields-" });
  await Deno.writeTextFile(`${dir}/ca.pem`, pki.trustedCaPem);
  await Deno.writeTextFile(`${dir}/bob.pem`, pki.good2.cert);
  const run = async (clientAuth: Record<string, unknown>) => {
    const port = freePort();
    const srv = await startServer({
      config: {
        admin: { disabled: true },
        storage: { module: "file_system", root: dir },
        apps: {
          tls: {
            certificates: {
              load_pem: [{
                certificate: pki.server.leafs.local.cert,
                key: pki.server.leafs.local.key,
              }],
            },
          },
          http: {
            servers: {
              srv0: {
                listen: [`127.0.0.1:${port}`],
                tls_connection_policies: [{ client_authentication: clientAuth }],
                routes: [{ handle: [{ handler: "static_response", body: "in" }] }],
              },
            },
          },
        },
      },
    });
    const as = async (cert: ClientCert) => {
      const a = await get(port, { servername: "localhost", host: "localhost", cert });
      return a === "refused" ? "refused" : a.status;
    };
    return { as, stop: () => srv.stop() };
  };
  try {
    const legacy = await run({ trusted_ca_certs_pem_files: [`${dir}/ca.pem`] });
    try {
      assert.equal(await legacy.as(pki.good), 200);
      assert.equal(await legacy.as(pki.untrusted), "refused");
    } finally {
      await legacy.stop();
    }
    const leaf = await run({
      trusted_ca_certs_pem_files: [`${dir}/ca.pem`],
      verifiers: [{
        verifier: "leaf",
        leaf_certs_loaders: [{ loader: "file", files: [`${dir}/bob.pem`] }],
      }],
    });
    try {
      assert.equal(await leaf.as(pki.good2), 200, "the listed leaf");
      assert.equal(await leaf.as(pki.good), "refused", "same CA, not listed");
    } finally {
      await leaf.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
