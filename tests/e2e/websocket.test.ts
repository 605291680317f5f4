/**
 * Chromium opens a WebSocket through `reverse_proxy` on an HTTPS site of the default listener
 * engine: the page comes over HTTP/2, the WebSocket over its own HTTP/1.1 connection (which
 * the server relays to its loopback server, see lib/server/listeners/deno/upgrade_relay.ts),
 * messages go both ways, and the page's close reaches the upstream.
 */
import assert from "node:assert/strict";
import { startServer } from "../../lib/server/embed.ts";
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM } from "./_harness.ts";
import { chromium } from "playwright-core";
import { freeTcpUdpPort, spkiHash, testPki } from "../server/listeners/h3/_h3.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "e2e websocket: Chromium's WebSocket through reverse_proxy over HTTPS (page over h2)",
  ignore: !HAVE_CHROMIUM,
  ...opts,
  async fn() {
    const p = await testPki();
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-e2e-ws-" });
    await Deno.writeTextFile(`${dir}/cert.pem`, p.leafs.localhost.cert);
    await Deno.writeTextFile(`${dir}/key.pem`, p.leafs.localhost.key);
    let closedUpstream: (code: number) => void;
    const upstreamClosed = new Promise<number>((r) => (closedUpstream = r));
    const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      if (req.headers.get("upgrade") !== "websocket") {
        return new Response("no upgrade", { status: 400 });
      }
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (e) => socket.send(`echo:${e.data}`);
      socket.onclose = (e) => closedUpstream(e.code);
      return response;
    });
    const port = freeTcpUdpPort();
    const srv = await startServer({
      config: {
        admin: { disabled: true },
        logging: { logs: { default: { level: "ERROR" } } },
        apps: {
          tls: {
            certificates: {
              load_files: [{ certificate: `${dir}/cert.pem`, key: `${dir}/key.pem` }],
            },
          },
          http: {
            servers: {
              srv0: {
                listen: [`127.0.0.1:${port}`],
                automatic_https: { disable: true },
                tls_connection_policies: [{}],
                protocols: ["h1", "h2"],
                routes: [
                  {
                    match: [{ path: ["/socket"] }],
                    handle: [{
                      handler: "reverse_proxy",
                      upstreams: [{ dial: `127.0.0.1:${upstream.addr.port}` }],
                    }],
                  },
                  {
                    handle: [{
                      handler: "static_response",
                      headers: { "content-type": ["text/html"] },
                      body: "<!doctype html><title>ws</title><p>socket page</p>",
                    }],
                  },
                ],
              },
            },
          },
        },
      },
    });
    const spki = await spkiHash(p.leafs.localhost.cert);
    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        ...CHROMIUM_ARGS,
        `--ignore-certificate-errors-spki-list=${spki}`,
        "--host-resolver-rules=MAP localhost 127.0.0.1",
      ],
    });
    try {
      const page = await browser.newPage();
      const res = await page.goto(`https://localhost:${port}/`);
      assert.equal(res?.status(), 200);
      assert.equal(
        await page.evaluate(() =>
          (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming)
            .nextHopProtocol
        ),
        "h2",
      );
      const got = await page.evaluate(() =>
        new Promise<string[]>((resolve, reject) => {
          const ws = new WebSocket(`wss://${location.host}/socket`);
          const out: string[] = [];
          ws.onopen = () => {
            ws.send("one");
            ws.send("two");
          };
          ws.onmessage = (e) => {
            out.push(String(e.data));
            if (out.length === 2) {
              ws.close(1000, "done");
              resolve(out);
            }
          };
          ws.onerror = () => reject(new Error("websocket error"));
          setTimeout(() => reject(new Error(`timed out with ${JSON.stringify(out)}`)), 10_000);
        })
      );
      assert.deepEqual(got, ["echo:one", "echo:two"]);
      assert.equal(await upstreamClosed, 1000, "the page's close reached the upstream");
    } finally {
      await browser.close();
      await srv.stop();
      await upstream.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
