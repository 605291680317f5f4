/**
 * The `pki` app through the admin API: `GET /pki/ca/<id>` and `/pki/ca/<id>/certificates`,
 * the CA kept in storage under Caddy's layout and stable across reloads and restarts (of the
 * server in this process, and of a `run` process killed with SIGKILL), errors for unknown ids
 * and paths. Certificates are checked with @peculiar/x509 and openssl.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../lib/server/embed.ts";
import { x509 } from "../../../lib/server/pki/x509.ts";
import { QUIET, serve, up } from "../fixtures/process.ts";

async function withServer(
  storageRoot: string,
  config: Record<string, unknown>,
  fn: (admin: string, load: (c: Record<string, unknown>) => Promise<boolean>) => Promise<void>,
): Promise<void> {
  const full = (c: Record<string, unknown>) => ({
    storage: { module: "file_system", root: storageRoot },
    ...c,
  });
  const s = await startServer({ adminAddress: "127.0.0.1:0", config: full(config) });
  try {
    await fn(s.adminUrl!, (c) => s.load(full(c)));
  } finally {
    await s.stop();
  }
}

async function get(admin: string, path: string, method = "GET") {
  const r = await fetch(admin + path, { method, headers: { origin: admin } });
  return { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
}

Deno.test("pki: GET /pki/ca/local provisions the local CA on demand (names, lifetimes, chain, storage layout)", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-pki-" });
  try {
    await withServer(root, {}, async (admin) => {
      const r = await get(admin, "/pki/ca/local");
      assert.equal(r.status, 200);
      assert.equal(r.type, "application/json");
      const info = JSON.parse(r.body);
      const year = new Date().getFullYear();
      assert.deepEqual(Object.keys(info), [
        "id",
        "name",
        "root_common_name",
        "intermediate_common_name",
        "root_certificate",
        "intermediate_certificate",
      ]);
      assert.equal(info.id, "local");
      assert.equal(info.name, "Gatehouse Local Authority");
      assert.equal(info.root_common_name, `Gatehouse Local Authority - ${year} ECC Root`);
      assert.equal(info.intermediate_common_name, "Gatehouse Local Authority - ECC Intermediate");

      const x = await x509();
      const rootCert = new x.X509Certificate(info.root_certificate);
      const inter = new x.X509Certificate(info.intermediate_certificate);
      assert.equal(rootCert.subject, `CN=Gatehouse Local Authority - ${year} ECC Root`);
      assert.equal(rootCert.issuer, rootCert.subject);
      assert.equal(inter.issuer, rootCert.subject);
      assert.ok(await rootCert.verify({ publicKey: rootCert.publicKey, signatureOnly: true }));
      assert.ok(await inter.verify({ publicKey: rootCert.publicKey, signatureOnly: true }));
      const days = (c: { notBefore: Date; notAfter: Date }) =>
        Math.round((c.notAfter.getTime() - c.notBefore.getTime()) / 86_400_000);
      assert.equal(days(rootCert), 3600);
      assert.equal(days(inter), 7);
      const bc = (c: InstanceType<typeof x.X509Certificate>) =>
        c.getExtension(x.BasicConstraintsExtension)!;
      assert.equal(bc(rootCert).ca, true);
      assert.equal(bc(rootCert).pathLength, 1);
      assert.equal(bc(inter).pathLength, 0);
      assert.equal((rootCert.publicKey.algorithm as EcKeyAlgorithm).namedCurve, "P-256");

      const chain = await get(admin, "/pki/ca/local/certificates");
      assert.equal(chain.status, 200);
      assert.equal(chain.type, "application/pem-certificate-chain");
      assert.equal(chain.body, info.intermediate_certificate + info.root_certificate);

      // Caddy's storage layout, private files
      for (const f of ["root.crt", "root.key", "intermediate.crt", "intermediate.key"]) {
        const st = await Deno.stat(`${root}/pki/authorities/local/${f}`);
        assert.equal(st.mode! & 0o777, 0o600, f);
      }
      assert.equal(
        await Deno.readTextFile(`${root}/pki/authorities/local/root.crt`),
        info.root_certificate,
      );
      assert.match(
        await Deno.readTextFile(`${root}/pki/authorities/local/root.key`),
        /^-----BEGIN EC PRIVATE KEY-----/,
      );
      // openssl agrees the chain holds
      await Deno.writeTextFile(`${root}/r.pem`, info.root_certificate);
      await Deno.writeTextFile(`${root}/i.pem`, info.intermediate_certificate);
      const v = await new Deno.Command("openssl", {
        args: ["verify", "-CAfile", `${root}/r.pem`, `${root}/i.pem`],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(v.code, 0, new TextDecoder().decode(v.stderr));
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pki: unknown CA ids and paths are JSON 404s, other methods 405; configured CAs answer", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-pki-" });
  try {
    const cfg = {
      apps: {
        pki: {
          certificate_authorities: {
            corp: { name: "Corp CA", root_common_name: "Corp Root {time.now.year}" },
          },
        },
      },
    };
    await withServer(root, cfg, async (admin) => {
      for (const path of ["/pki/ca/nope", "/pki/ca/nope/certificates"]) {
        const r = await get(admin, path);
        assert.equal(r.status, 404, path);
        assert.equal(r.type, "application/json");
        assert.deepEqual(JSON.parse(r.body), {
          error: "no certificate authority configured with id: nope",
        });
      }
      for (const path of ["/pki/ca/", "/pki/ca/local/other", "/pki/x"]) {
        const r = await get(admin, path);
        assert.equal(r.status, 404, path);
        assert.deepEqual(JSON.parse(r.body), { error: `resource not found: ${path}` });
      }
      const post = await get(admin, "/pki/ca/local", "POST");
      assert.equal(post.status, 405);
      assert.deepEqual(JSON.parse(post.body), { error: "method not allowed: POST" });

      const corp = JSON.parse((await get(admin, "/pki/ca/corp")).body);
      assert.equal(corp.name, "Corp CA");
      assert.equal(corp.root_common_name, `Corp Root ${new Date().getFullYear()}`);
      assert.equal(corp.intermediate_common_name, "Corp CA - ECC Intermediate");
      // local still works next to a configured CA
      assert.equal((await get(admin, "/pki/ca/local")).status, 200);
    });
    // no CA was created for the unknown id
    assert.deepEqual(
      [...Deno.readDirSync(`${root}/pki/authorities`)].map((e) => e.name).sort(),
      ["corp", "local"],
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pki: the local CA is the same across reloads, restarts and instances sharing the storage", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-pki-" });
  try {
    let first = "";
    await withServer(root, {}, async (admin, load) => {
      first = JSON.parse((await get(admin, "/pki/ca/local")).body).root_certificate;
      await load({ apps: { pki: {} } });
      assert.equal(JSON.parse((await get(admin, "/pki/ca/local")).body).root_certificate, first);
      await load({ logging: { logs: { default: { level: "ERROR" } } } });
      assert.ok((await get(admin, "/pki/ca/local/certificates")).body.endsWith(first));
    });
    // a restart (new process state) on the same storage
    await withServer(root, {}, async (admin) => {
      const again = JSON.parse((await get(admin, "/pki/ca/local")).body);
      assert.equal(again.root_certificate, first);
    });
    // two instances starting at once on an empty storage agree on one CA
    const shared = await Deno.makeTempDir({ prefix: "gatehouse-pki-" });
    try {
      const roots: string[] = [];
      await Promise.all([0, 1].map(() =>
        withServer(shared, {}, async (admin) => {
          roots.push(JSON.parse((await get(admin, "/pki/ca/local")).body).root_certificate);
        })
      ));
      assert.equal(roots[0], roots[1]);
    } finally {
      await Deno.remove(shared, { recursive: true });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pki: a server process killed with SIGKILL and run again on the same storage has the same root and intermediate", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-pki-" });
  const config = { storage: { module: "file_system", root }, logging: QUIET, apps: { pki: {} } };
  const ca = async () => {
    const p = await serve(config);
    try {
      await up(p.base);
      const r = await get(p.base, "/pki/ca/local");
      assert.equal(r.status, 200, r.body);
      const { root_certificate, intermediate_certificate } = JSON.parse(r.body);
      return { root_certificate, intermediate_certificate, pid: p.p.child.pid };
    } finally {
      p.p.child.kill("SIGKILL"); // no cleanup runs
      assert.equal((await p.p.status).signal, "SIGKILL");
      await Deno.remove(p.dir, { recursive: true });
    }
  };
  try {
    const first = await ca();
    const again = await ca();
    assert.notEqual(again.pid, first.pid, "another process");
    assert.equal(again.root_certificate, first.root_certificate);
    assert.equal(again.intermediate_certificate, first.intermediate_certificate);
    assert.match(first.intermediate_certificate, /^-----BEGIN CERTIFICATE-----/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
