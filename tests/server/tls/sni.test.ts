/**
 * Certificates chosen per handshake by server name, on both listener engines: three names on
 * one port, each served its own certificate from the local CA (curl checks the chain against
 * the root, never -k); an unknown name gets no certificate; the certificates are kept in
 * storage under Caddy's layout and reused after a restart.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, sites, tempFile, tlsServer } from "./_helpers.ts";

const NAMES = ["a.localhost", "b.localhost", "c.localhost"];

for (const engine of ["deno", "node"] as const) {
  Deno.test(`tls (${engine} engine): three names on one port, one certificate each, chosen by SNI`, async () => {
    const port = freePort();
    const srv = await tlsServer({
      apps: sites(port, NAMES, { listener_engine: engine }, {
        http_port: freePort(),
        https_port: port,
      }),
    });
    const dir = await Deno.makeTempDir();
    try {
      const ca = await tempFile(dir, "root.pem", await srv.rootPem());
      for (const name of NAMES) {
        const r = await curl(`https://${name}:${port}/`, {
          ca,
          resolve: `${name}:${port}:127.0.0.1`,
        });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.status, 200);
        assert.equal(r.body, `hi ${name}`);
        const cert = await servedCert(port, name);
        assert.deepEqual(cert?.names, [name], `the handshake for ${name} got its own certificate`);
      }
      // a name with no certificate: the handshake fails, nothing is served
      const unknown = await curl(`https://d.localhost:${port}/`, {
        ca,
        resolve: `d.localhost:${port}:127.0.0.1`,
      });
      assert.notEqual(unknown.code, 0);
      assert.equal(unknown.status, 0);
      assert.equal(await servedCert(port, "d.localhost"), null);
    } finally {
      await srv.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("tls: managed certificates live in storage under Caddy's layout and survive a restart", async () => {
  const storage = await Deno.makeTempDir({ prefix: "gatehouse-tls-" });
  const port = freePort();
  const apps = sites(port, ["a.localhost"], {}, { http_port: freePort(), https_port: port });
  try {
    let srv = await tlsServer({ apps }, storage);
    let first: { serial: string } | null;
    try {
      first = await servedCert(port, "a.localhost");
      assert.ok(first);
    } finally {
      await srv.stop();
    }
    const base = `${storage}/certificates/local/a.localhost/a.localhost`;
    assert.match(
      await Deno.readTextFile(`${base}.crt`),
      /^(-----BEGIN CERTIFICATE-----[\s\S]+?){2}/,
    );
    assert.match(await Deno.readTextFile(`${base}.key`), /^-----BEGIN EC PRIVATE KEY-----/);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${base}.json`)), {
      sans: ["a.localhost"],
    });
    assert.equal((await Deno.stat(`${base}.key`)).mode! & 0o777, 0o600);
    // the chain is leaf + intermediate, and the leaf lives 12 hours (Caddy's default)
    const text = new TextDecoder().decode(
      (await new Deno.Command("openssl", {
        args: ["x509", "-in", `${base}.crt`, "-noout", "-dates", "-issuer"],
        stdout: "piped",
      }).output()).stdout,
    );
    assert.match(text, /issuer=CN ?= ?Gatehouse Local Authority - ECC Intermediate/);
    const [nb, na] = [/notBefore=(.*)/, /notAfter=(.*)/].map((re) => Date.parse(re.exec(text)![1]));
    assert.equal(na - nb, 12 * 3600_000);

    srv = await tlsServer({ apps }, storage);
    try {
      assert.equal(
        (await servedCert(port, "a.localhost"))?.serial,
        first!.serial,
        "reused, not re-issued",
      );
    } finally {
      await srv.stop();
    }
  } finally {
    await Deno.remove(storage, { recursive: true });
  }
});
