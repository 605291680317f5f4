/**
 * The pki app's `intermediate_lifetime` on a server process, loaded through the admin API:
 * generated intermediates get it, and Caddy's two checks refuse the load with Caddy's words. Caddy
 * 2.6.2 has no such field (it came in v2.6.3, `modules/caddypki/ca.go`); the checks and messages
 * are current Caddy's: `modules/caddypki/ca.go` (`Provision`: the intermediate's lifetime is less
 * than what is left of the root's) and `modules/caddypki/acmeserver/acmeserver.go` (`Provision`:
 * a certificate's lifetime is less than the intermediate's).
 */
import assert from "node:assert/strict";
import { x509 } from "../../../lib/server/pki/x509.ts";
import { call } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";

const lifetimeDays = (pem: string, x: Awaited<ReturnType<typeof x509>>) => {
  const c = new x.X509Certificate(pem);
  return (c.notAfter.getTime() - c.notBefore.getTime()) / 86_400_000;
};

Deno.test("pki: intermediate_lifetime sets generated intermediates' lifetime; Caddy's checks refuse longer leaf and intermediate lifetimes", async () => {
  const s = await serve({ logging: QUIET });
  try {
    await up(s.base);
    const storage = { module: "file_system", root: `${s.dir}/storage` };
    const pki = (cas: Record<string, unknown>) => ({ certificate_authorities: cas });
    const ok = await call(s.base, "POST", "/load", {
      logging: QUIET,
      storage,
      apps: { pki: pki({ short: { intermediate_lifetime: "36h" } }) },
    });
    assert.equal(ok.status, 200, ok.body);
    const info = JSON.parse((await call(s.base, "GET", "/pki/ca/short")).body);
    const x = await x509();
    assert.equal(lifetimeDays(info.intermediate_certificate, x), 1.5);
    assert.equal(lifetimeDays(info.root_certificate, x), 3600);

    // the root lives 3600 days: an intermediate of 3601 days is refused before it is made
    const long = await call(s.base, "POST", "/load", {
      storage,
      apps: { pki: pki({ long: { intermediate_lifetime: `${3601 * 24}h` } }) },
    });
    assert.equal(long.status, 400);
    assert.match(
      JSON.parse(long.body).error,
      /provisioning CA 'long': intermediate certificate lifetime must be less than actual root certificate lifetime \(863\d{2}h\d+m[\d.]+s\)/,
    );
    const negative = await call(s.base, "POST", "/load", {
      storage,
      apps: { pki: pki({ neg: { intermediate_lifetime: "-1h" } }) },
    });
    assert.equal(negative.status, 400);
    assert.match(negative.body, /pki\.certificate_authorities\.neg\.intermediate_lifetime/);

    // an ACME server's certificates must not outlive the intermediate that signs them
    const acme = (lifetime: string) => ({
      storage,
      apps: {
        pki: pki({ short: { intermediate_lifetime: "36h" } }),
        http: {
          servers: {
            a: {
              listen: ["127.0.0.1:0"],
              routes: [{ handle: [{ handler: "acme_server", ca: "short", lifetime }] }],
            },
          },
        },
      },
    });
    const tooLong = await call(s.base, "POST", "/load", acme("2d"));
    assert.equal(tooLong.status, 400);
    assert.match(
      JSON.parse(tooLong.body).error,
      /certificate lifetime \(48h0m0s\) should be less than intermediate certificate lifetime \(36h0m0s\)/,
    );
    assert.equal((await call(s.base, "POST", "/load", acme("1d"))).status, 200);

    // the Gatehousefile's pki option reaches it too
    const text = await call(
      s.base,
      "POST",
      "/load",
      `{\n\tstorage file_system ${s.dir}/storage\n\tpki {\n\t\tca other {\n\t\t\tintermediate_lifetime 2d\n\t\t}\n\t}\n}\n`,
      { "content-type": "text/caddyfile" },
    );
    assert.equal(text.status, 200, text.body);
    const other = JSON.parse((await call(s.base, "GET", "/pki/ca/other")).body);
    assert.equal(lifetimeDays(other.intermediate_certificate, x), 2);
  } finally {
    s.p.child.kill("SIGTERM");
    await finish(s.p, s.dir);
  }
});
