/**
 * HTTP → HTTPS redirects on a server process when an exact name and a wildcard both match the
 * host: the exact name's HTTPS port wins, whatever the order of the servers. Caddy 2.6.2 orders
 * the redirect routes by Go's map iteration (either may win); current Caddy sorts them, exact
 * names before wildcards (`modules/caddyhttp/autohttps.go`, v2.11.2, "Sort auto-HTTPS redirect
 * routes by host specificity", caddyserver/caddy#7502).
 */
import assert from "node:assert/strict";
import { freePort, rawHttp } from "../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../fixtures/process.ts";

Deno.test("automatic HTTPS: a host an exact name and a wildcard both match is redirected to the exact name's port", async () => {
  const [http, wild, exact] = [freePort(), freePort(), freePort()];
  const site = (host: string, port: number) => ({
    listen: [`127.0.0.1:${port}`],
    automatic_https: { disable_certificates: true },
    routes: [{
      match: [{ host: [host] }],
      handle: [{ handler: "static_response", body: host }],
    }],
  });
  const s = await serve({
    logging: QUIET,
    apps: {
      http: {
        http_port: http,
        servers: {
          // the wildcard's server first: its redirect route comes first before the sort
          wild: site("*.example.test", wild),
          exact: site("a.example.test", exact),
        },
      },
    },
  }, ["--workers", "1"]);
  try {
    await up(s.base);
    const location = async (host: string) => {
      const r = await rawHttp(
        http,
        `GET /p?q HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(r.status, 308, r.text);
      return /\r\nlocation: ([^\r]*)/i.exec(r.text)?.[1];
    };
    assert.equal(await location("a.example.test"), `https://a.example.test:${exact}/p?q`);
    assert.equal(await location("b.example.test"), `https://b.example.test:${wild}/p?q`);
    const routes = await (await fetch(`${s.base}/config/apps/http/servers`)).json();
    assert.equal(
      routes.remaining_auto_https_redirects,
      undefined,
      "GET /config shows what was loaded",
    );
  } finally {
    try {
      s.p.child.kill("SIGTERM");
    } catch { /* exited */ }
    await finish(s.p, s.dir);
  }
});
