/**
 * A TLS server that also lists the HTTP port (`http_port`) among its listen addresses: that
 * listener speaks plain HTTP, as Caddy's (`modules/caddyhttp/app.go`: TLS only where the port
 * is not the HTTP port), with automatic HTTPS's redirects after the site's own routes. Caddy
 * 2.6.2 runs the same config as the oracle; both answer alike on both ports.
 */
import assert from "node:assert/strict";
import { freePort, rawHttp, until } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";
import { caddyAvailable } from "../parity2/caddy.ts";

function config(http: number, https: number, storage: string) {
  return {
    storage: { module: "file_system", root: storage },
    apps: {
      pki: { certificate_authorities: { local: { install_trust: false } } },
      http: {
        http_port: http,
        https_port: https,
        servers: {
          srv0: {
            listen: [`127.0.0.1:${http}`, `127.0.0.1:${https}`],
            routes: [{
              match: [{ host: ["a.localhost"] }],
              handle: [{ handler: "static_response", body: "a {http.request.scheme}" }],
            }],
          },
        },
      },
    },
  };
}

/** What a server answers on both ports: plain HTTP for two hosts, then HTTPS. */
async function answers(http: number, https: number): Promise<string[]> {
  const plain = async (host: string) => {
    const r = await rawHttp(http, `GET /p HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const location = /\r\nlocation: ([^\r]*)/i.exec(r.text)?.[1] ?? "";
    return `${r.status} ${location} ${r.text.slice(r.text.indexOf("\r\n\r\n") + 4)}`;
  };
  const out = await new Deno.Command("curl", {
    args: ["-sk", "--resolve", `a.localhost:${https}:127.0.0.1`, `https://a.localhost:${https}/`],
    stdout: "piped",
  }).output();
  return [
    await plain("a.localhost"),
    await plain("b.localhost"),
    new TextDecoder().decode(out.stdout),
  ];
}

async function runCaddy(http: number, https: number): Promise<() => Promise<void>> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-caddy-" });
  await Deno.writeTextFile(
    `${dir}/caddy.json`,
    JSON.stringify({ admin: { disabled: true }, ...config(http, https, `${dir}/data`) }),
  );
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "null",
    env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
  }).spawn();
  return async () => {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  };
}

Deno.test({
  name: "a TLS server listening on the HTTP port serves plain HTTP there, as Caddy 2.6.2",
  ignore: !caddyAvailable(),
  async fn() {
    const [http, https, caddyHttp, caddyHttps] = [freePort(), freePort(), freePort(), freePort()];
    const s = await serve({ logging: QUIET }, ["--workers", "1"]);
    const stopCaddy = await runCaddy(caddyHttp, caddyHttps);
    try {
      await up(s.base);
      const load = await fetch(`${s.base}/load`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ logging: QUIET, ...config(http, https, `${s.dir}/storage`) }),
      });
      assert.equal(load.status, 200, await load.text());
      // the certificate for a.localhost is issued once the config runs
      await until(async () => (await answers(http, https))[2] === "a https", 15_000, "HTTPS");
      await until(
        async () => (await answers(caddyHttp, caddyHttps))[2] === "a https",
        15_000,
        "Caddy's HTTPS",
      );
      const ours = await answers(http, https);
      const theirs = (await answers(caddyHttp, caddyHttps)).map((a) =>
        a.replaceAll(String(caddyHttps), String(https))
      );
      assert.deepEqual(ours, theirs);
      // the site's own route first, then the redirects (the catch-all for other hosts)
      assert.deepEqual(ours, ["200  a http", "308 https://b.localhost/p ", "a https"]);
    } finally {
      await stopCaddy();
      s.p.child.kill("SIGTERM");
      await finish(s.p, s.dir);
    }
  },
});
