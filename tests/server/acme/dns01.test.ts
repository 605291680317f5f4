/**
 * The DNS-01 challenge end to end against a real Pebble: the TXT record is set through the
 * `challtestsrv` DNS provider (pebble-challtestsrv's management API), its propagation is
 * checked against challtestsrv's DNS server (the one Pebble resolves with), and a wildcard
 * certificate is obtained and served for names under it; the record is deleted afterwards.
 * A record that never shows on the resolvers asked fails the challenge with the propagation
 * timeout, and is deleted all the same.
 */
import assert from "node:assert/strict";
import { curl, freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, rootFile, waitFor } from "./_server.ts";

function wildcardSite(https: number, httpPort: number): Record<string, unknown> {
  return {
    http_port: httpPort,
    https_port: https,
    servers: {
      srv0: {
        listen: [`127.0.0.1:${https}`],
        routes: [{
          // a.wild.test is left to the wildcard's certificate (as Caddy: one order)
          match: [{ host: ["*.wild.test", "a.wild.test"] }],
          handle: [{ handler: "static_response", body: "hello {http.request.host}" }],
        }],
      },
    },
  };
}

async function txt(address: string, name: string): Promise<string[]> {
  const [ipAddr, port] = address.split(":");
  try {
    const r = await Deno.resolveDns(name, "TXT", { nameServer: { ipAddr, port: Number(port) } });
    return r.map((chunks) => chunks.join(""));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

Deno.test("dns-01: a wildcard certificate obtained from Pebble through the challtestsrv provider and served", async () => {
  const pebble = await startPebble();
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const log = `${dir}/server.log`;
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: wildcardSite(https, pebble.httpPort),
      tls: {
        // the tls app's default provider and resolvers, used by the issuer's challenges.dns
        dns: { name: "challtestsrv", url: pebble.dnsManagement },
        resolvers: [pebble.dnsAddress],
        automation: {
          policies: [{
            subjects: ["*.wild.test"],
            issuers: [pebbleIssuer(pebble, { dns: { ttl: "1m" } })],
          }],
        },
      },
    },
  });
  try {
    const got = await waitFor(
      async () => {
        const c = await servedCert(https, "a.wild.test");
        return c?.names.includes("*.wild.test") ? c : null;
      },
      60_000,
      "a wildcard certificate for *.wild.test",
    );
    assert.deepEqual(got.names, ["*.wild.test"]);
    assert.equal(pebble.orderCount(), 1, "one order: the wildcard's");
    const root = await rootFile(pebble, dir);
    for (const name of ["a.wild.test", "other.wild.test"]) {
      // (deno engine: a listener generation that answered "no certificate" before the
      // certificate came drains for a second after the swap, so poll briefly)
      const res = await waitFor(
        async () => {
          const r = await curl(`https://${name}:${https}/`, {
            ca: root,
            resolve: `${name}:${https}:127.0.0.1`,
          });
          return r.status === 200 ? r : null;
        },
        10_000,
        `an HTTPS answer for ${name}`,
      );
      assert.equal(res.body, `hello ${name}`);
    }
    const entries = await logEntries(log);
    assert.ok(
      entries.some((e) =>
        e.msg === "trying to solve challenge" && e.identifier === "wild.test" &&
        e.challenge_type === "dns-01"
      ),
      "the dns-01 challenge was the one solved",
    );
    assert.ok(!entries.some((e) => e.msg === "served key authentication"), "no HTTP-01 answered");
    // The challenge's record is gone from the DNS server once the order is done.
    assert.deepEqual(await txt(pebble.dnsAddress, "_acme-challenge.wild.test"), []);
  } finally {
    await server.stop();
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dns-01: a record the resolvers never see fails on the propagation timeout and is deleted", async () => {
  const pebble = await startPebble();
  // A second challtestsrv: a DNS server that never gets the record (the resolver asked).
  const [otherDns, otherMgmt] = [freePort(), freePort()];
  const other = new Deno.Command("pebble-challtestsrv", {
    args: [
      ...["-dns01", `127.0.0.1:${otherDns}`, "-http01", "", "-https01", "", "-tlsalpn01", ""],
      ...["-management", `127.0.0.1:${otherMgmt}`],
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const dir = await Deno.makeTempDir();
  const https = freePort();
  const log = `${dir}/server.log`;
  const server = await tlsServer({
    logging: fileLogging(log),
    apps: {
      http: wildcardSite(https, pebble.httpPort),
      tls: {
        automation: {
          policies: [{
            subjects: ["*.wild.test"],
            issuers: [pebbleIssuer(pebble, {
              dns: {
                provider: { name: "challtestsrv", url: pebble.dnsManagement },
                resolvers: [`127.0.0.1:${otherDns}`],
                propagation_timeout: "3s",
              },
            })],
          }],
        },
      },
    },
  });
  try {
    const failure = await waitFor(
      async () =>
        (await logEntries(log)).find((e) =>
          e.msg === "could not get certificate" && e.identifier === "*.wild.test"
        ),
      30_000,
      "the failed attempt in the log",
    );
    assert.match(
      String(failure.error),
      /timed out after 3000 ms waiting for the TXT record _acme-challenge\.wild\.test\. to propagate/,
    );
    assert.equal(await servedCert(https, "a.wild.test"), null, "nothing is served");
    // Set on the provider's server, then deleted after the failure.
    assert.deepEqual(await txt(pebble.dnsAddress, "_acme-challenge.wild.test"), []);
    assert.ok(!pebble.log().includes("Issued certificate"), "no certificate was issued");
  } finally {
    await server.stop();
    other.kill("SIGTERM");
    await other.status;
    await pebble.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
