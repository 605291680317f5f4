/**
 * DNS providers and the DNS settings of the `tls` app: the `mock` provider keeps records in
 * memory (and only there); names relative to zones; the acme issuer's `challenges.dns` takes
 * its provider from the tls app's `dns` when it names none, and is refused without one; the
 * Gatehousefile syntax of the `challtestsrv` provider; the challtestsrv provider changes the
 * records a real DNS server answers.
 */
import assert from "node:assert/strict";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { MockDnsProvider } from "../../../lib/server/tls/dns/mock.ts";
import { ChalltestsrvDnsProvider } from "../../../lib/server/tls/dns/challtestsrv.ts";
import { absoluteName, relativeName } from "../../../lib/server/tls/dns/provider.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { freePort } from "./_helpers.ts";

Deno.test("dns mock provider: append, get, set and delete in memory", async () => {
  const p = new MockDnsProvider("foo");
  assert.equal(p.argument, "foo");
  const zone = "example.com.";
  await p.appendRecords(zone, [
    { type: "txt", name: "_acme-challenge", data: "one" },
    { type: "TXT", name: "_acme-challenge", data: "two" },
  ]);
  assert.deepEqual((await p.getRecords(zone)).map((r) => r.data), ["one", "two"]);
  const deleted = await p.deleteRecords(zone, [{
    type: "TXT",
    name: "_acme-challenge",
    data: "one",
  }]);
  assert.equal(deleted.length, 1);
  assert.deepEqual(await p.deleteRecords(zone, [{ type: "TXT", name: "x", data: "none" }]), []);
  await p.setRecords(zone, [{ type: "TXT", name: "_acme-challenge", data: "three" }]);
  assert.deepEqual((await p.getRecords(zone)).map((r) => r.data), ["three"]);
  assert.deepEqual(await p.getRecords("other.org."), [], "zones are separate");
});

Deno.test("dns names: relative to the zone and back", () => {
  assert.equal(
    relativeName("_acme-challenge.www.example.com.", "example.com."),
    "_acme-challenge.www",
  );
  assert.equal(relativeName("Example.com", "example.com."), "@");
  assert.equal(relativeName("_acme-challenge.x.test.", "."), "_acme-challenge.x.test");
  assert.equal(absoluteName("@", "example.com"), "example.com.");
  assert.equal(absoluteName("_acme-challenge", "example.com."), "_acme-challenge.example.com.");
  assert.equal(absoluteName("a.b", "."), "a.b.");
});

Deno.test("dns config: challenges.dns takes the tls app's provider; none at all is refused", async () => {
  const config = (tls: Record<string, unknown>) => ({
    apps: {
      tls: {
        ...tls,
        automation: {
          policies: [{
            subjects: ["*.example.com"],
            issuers: [{ module: "acme", challenges: { dns: {} } }],
          }],
        },
      },
    },
  });
  await validateConfig(config({ dns: { name: "mock" }, resolvers: ["1.1.1.1"] }));
  await validateConfig(config({ dns: { name: "challtestsrv", url: "http://127.0.0.1:8055" } }));
  await assert.rejects(
    validateConfig(config({})),
    /DNS challenge enabled, but no DNS provider configured/,
  );
  await assert.rejects(
    validateConfig(config({ dns: { name: "nope" } })),
    /tls\.dns: .*unknown module: dns\.providers\.nope/,
  );
  await assert.rejects(
    validateConfig(config({ dns: { argument: "x" } })),
    /tls\.dns: must be an object naming a DNS provider module/,
  );
  await assert.rejects(
    validateConfig(config({ dns: { name: "mock" }, resolvers: ["resolver.example"] })),
    /tls\.resolvers: "resolver\.example" is not an IP address/,
  );
  await assert.rejects(
    validateConfig(config({ dns: { name: "challtestsrv", url: "ftp://x" } })),
    /dns\.providers\.challtestsrv\.url: must be the http\(s\) URL/,
  );
});

Deno.test("dns: Gatehousefile syntax of the challtestsrv provider", () => {
  const config = adaptGatehousefile(
    "{\n\tdns challtestsrv http://127.0.0.1:8055\n\tacme_dns\n}\n*.example.com {\n\trespond hi\n}\n",
    { filename: "Gatehousefile" },
  ).result as { apps: { tls: Record<string, unknown> } };
  assert.deepEqual(config.apps.tls.dns, { name: "challtestsrv", url: "http://127.0.0.1:8055" });
  const block = adaptGatehousefile(
    "example.com {\n\ttls {\n\t\tdns challtestsrv {\n\t\t\turl http://127.0.0.1:9\n\t\t}\n\t}\n}\n",
    { filename: "Gatehousefile" },
  ).result as {
    apps: { tls: { automation: { policies: { issuers: { challenges: { dns: unknown } }[] }[] } } };
  };
  assert.deepEqual(
    block.apps.tls.automation.policies[0].issuers[0].challenges.dns,
    { provider: { name: "challtestsrv", url: "http://127.0.0.1:9" } },
  );
});

Deno.test("dns challtestsrv provider: records appear on and leave a real DNS server", async () => {
  const [dns, mgmt] = [freePort(), freePort()];
  const srv = new Deno.Command("pebble-challtestsrv", {
    args: [
      ...["-dns01", `127.0.0.1:${dns}`, "-http01", "", "-https01", "", "-tlsalpn01", ""],
      ...["-management", `127.0.0.1:${mgmt}`],
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const lookup = async (name: string) => {
    try {
      const r = await Deno.resolveDns(name, "TXT", {
        nameServer: { ipAddr: "127.0.0.1", port: dns },
      });
      return r.map((c) => c.join("")).sort();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
  };
  try {
    const p = new ChalltestsrvDnsProvider(`http://127.0.0.1:${mgmt}`);
    for (let i = 0;; i++) {
      try {
        await p.appendRecords(".", [{ type: "TXT", name: "_acme-challenge.d.test", data: "a" }]);
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await p.appendRecords(".", [{ type: "TXT", name: "_acme-challenge.d.test", data: "b" }]);
    assert.deepEqual(await lookup("_acme-challenge.d.test"), ["a", "b"]);
    await p.deleteRecords(".", [{ type: "TXT", name: "_acme-challenge.d.test", data: "a" }]);
    assert.deepEqual(await lookup("_acme-challenge.d.test"), ["b"], "the other value stays");
    await p.deleteRecords(".", [{ type: "TXT", name: "_acme-challenge.d.test", data: "b" }]);
    assert.deepEqual(await lookup("_acme-challenge.d.test"), []);
    // CNAME records (ZeroSSL's CNAME validation) appear and leave too.
    const cname = { type: "CNAME", name: "_ab12.d.test", data: "x.y.sectigo.com." };
    await p.appendRecords(".", [cname]);
    const ns = { nameServer: { ipAddr: "127.0.0.1", port: dns } };
    assert.deepEqual(await Deno.resolveDns("_ab12.d.test", "CNAME", ns), ["x.y.sectigo.com."]);
    assert.deepEqual(await p.deleteRecords(".", [cname]), [cname]);
    await assert.rejects(Deno.resolveDns("_ab12.d.test", "CNAME", ns), Deno.errors.NotFound);
    await assert.rejects(
      p.appendRecords(".", [{ type: "A", name: "x.test", data: "127.0.0.1" }]),
      /only TXT and CNAME records/,
    );
  } finally {
    srv.kill("SIGTERM");
    await srv.status;
  }
});
