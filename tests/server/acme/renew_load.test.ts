/**
 * Renewal under steady load: `wrk` keeps HTTPS requests going against a server whose Pebble
 * certificate (20 s, renewed with half of it left) is renewed during the run; every request
 * succeeds (no non-2xx answer, no socket error) on keep-alive connections and with a new TLS
 * handshake per request, on both listener engines. (The deno engine replaces its TLS listener
 * when the certificate changes and hands the port over to the new one without resetting a
 * connection: see docs/server.md, "Renewal under load".)
 */
import assert from "node:assert/strict";
import { freePort, servedCert, tlsServer } from "../tls/_helpers.ts";
import { startPebble } from "./_pebble.ts";
import { fileLogging, logEntries, pebbleIssuer, waitFor } from "./_server.ts";

const RUNS = [
  { engine: "deno", close: false },
  { engine: "deno", close: true },
  { engine: "node", close: false },
  { engine: "node", close: true },
] as const;

for (const { engine, close } of RUNS) {
  const mode = close ? "a new connection per request" : "keep-alive connections";
  Deno.test(`renewal under wrk load (${engine} engine, ${mode}): zero failed requests`, async () => {
    const pebble = await startPebble({ validitySeconds: 20 });
    const dir = await Deno.makeTempDir();
    const https = freePort();
    const log = `${dir}/server.log`;
    const server = await tlsServer({
      logging: fileLogging(log),
      apps: {
        http: {
          http_port: pebble.httpPort,
          https_port: https,
          servers: {
            srv0: {
              listen: [`127.0.0.1:${https}`],
              ...(engine === "node" ? { listener_engine: "node" } : {}),
              routes: [{
                match: [{ host: ["127.0.0.1"] }],
                handle: [{ handler: "static_response", body: "steady" }],
              }],
            },
          },
        },
        tls: {
          automation: {
            renew_interval: "1s",
            policies: [{
              subjects: ["127.0.0.1"],
              renewal_window_ratio: 0.5,
              issuers: [pebbleIssuer(pebble, { "tls-alpn": { disabled: true } })],
            }],
          },
        },
      },
    });
    try {
      const first = await waitFor(
        async () => {
          const c = await servedCert(https, "127.0.0.1");
          return c?.names.includes("127.0.0.1") ? c : null;
        },
        30_000,
        "the first certificate",
      );
      // 15 s of load: the certificate renews about 10 s after it was issued.
      const started = Date.now() / 1000;
      const wrk = await new Deno.Command("wrk", {
        args: [
          "-t",
          "1",
          "-c",
          "8",
          "-d",
          "15s",
          // Connection: close makes every request a new TLS handshake, across the renewal too.
          ...(close ? ["-H", "Connection: close"] : []),
          `https://127.0.0.1:${https}/`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const out = new TextDecoder().decode(wrk.stdout);
      assert.equal(wrk.code, 0, new TextDecoder().decode(wrk.stderr));
      const ended = Date.now() / 1000;
      const renewals = (await logEntries(log)).filter((e) =>
        e.msg === "certificate renewed successfully" && (e.ts as number) > started &&
        (e.ts as number) < ended
      );
      assert.ok(renewals.length >= 1, "renewed while wrk was running");
      const now = await servedCert(https, "127.0.0.1");
      assert.notEqual(now?.serial, first.serial);
      if (engine === "deno") {
        // the listener was replaced for the new certificate, and handed the port over
        const during = (await logEntries(log)).filter((e) =>
          (e.ts as number) > started && (e.ts as number) < ended
        ).map((e) => String(e.msg));
        assert.ok(during.some((m) => m.startsWith("certificates changed")), during.join("\n"));
        assert.deepEqual(during.filter((m) => /handover|reset/.test(m)), []);
      }
      const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
      assert.ok(total > 50, out);
      assert.doesNotMatch(out, /Non-2xx or 3xx responses/, out);
      assert.doesNotMatch(out, /Socket errors/, out);
      console.log(`${engine}, ${mode}: ${total} requests, ${renewals.length} renewal(s), no error`);
    } finally {
      await server.stop();
      await pebble.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
