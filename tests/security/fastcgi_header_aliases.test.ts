/**
 * FastCGI environment collisions, through a `gatehouse run` process (both listener engines)
 * in front of a real php-fpm (Debian php8.2-fpm): a client field spelled `X_Forwarded_For`
 * or `X.Forwarded-Host` becomes the same `$_SERVER` variable as the `X-Forwarded-For` and
 * `X-Forwarded-Host` the proxy sets (CGI writes `-` as `_`, PHP also folds `.`), and,
 * coming later, replaced the proxy's value; the same for `X_Real_Ip` against a `header_up
 * X-Real-IP`. The server now drops such names before any route (as current Caddy and nginx
 * do), so the values the proxy sets always reach PHP; names an operator lists in
 * `expected_underscore_headers` are kept and still never replace a hyphenated field.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { phpFpmAvailable, startPhpFpm } from "../server/parity2/php_fpm.ts";
import { type EnvAnswer, SCRIPTS } from "../server/parity2/php_scripts.ts";

const ignore = !phpFpmAvailable();
const ENGINES = ["deno", "node"] as const;

function phpSite(root: string, dial: string, engine: string, extra: Record<string, unknown>) {
  return {
    listener_engine: engine,
    ...extra,
    routes: [{
      handle: [{
        handler: "reverse_proxy",
        transport: { protocol: "fastcgi", root, split_path: [".php"] },
        headers: { request: { set: { "X-Real-IP": ["{http.request.remote.host}"] } } },
        upstreams: [{ dial }],
      }],
    }],
  };
}

const SPOOFED = {
  "X_Forwarded_For": "6.6.6.6",
  "X_Forwarded_Proto": "https",
  "X.Forwarded-Host": "evil.example",
  "X_Real_Ip": "6.6.6.6",
};

for (const engine of ENGINES) {
  Deno.test({
    name: `fastcgi (${engine} engine): client fields spelled with _ or . never replace the proxy's`,
    ignore,
    async fn() {
      const fpm = await startPhpFpm(SCRIPTS);
      const g = await startGatehouse({ php: phpSite(fpm.root, fpm.dial, engine, {}) });
      try {
        const port = g.ports.php;
        const r = await fetch(`http://127.0.0.1:${port}/env.php`, { headers: SPOOFED });
        assert.equal(r.status, 200);
        const { server: s } = await r.json() as EnvAnswer;
        assert.equal(s.HTTP_X_FORWARDED_FOR, "127.0.0.1");
        assert.equal(s.HTTP_X_FORWARDED_PROTO, "http");
        assert.equal(s.HTTP_X_FORWARDED_HOST, `127.0.0.1:${port}`);
        assert.equal(s.HTTP_X_REAL_IP, "127.0.0.1");
        const leaked = Object.entries(s).filter(([, v]) =>
          typeof v === "string" && (v.includes("6.6.6.6") || v.includes("evil.example"))
        );
        assert.deepEqual(leaked, [], "no client value reached PHP");
      } finally {
        await g.stop();
        await fpm.stop();
      }
    },
  });
}

Deno.test({
  name: "fastcgi: a field kept by expected_underscore_headers reaches PHP, never over the proxy's",
  ignore,
  async fn() {
    const fpm = await startPhpFpm(SCRIPTS);
    const g = await startGatehouse({
      php: phpSite(fpm.root, fpm.dial, "deno", {
        expected_underscore_headers: ["X_App_Token", "x_real_ip"],
      }),
    });
    try {
      const r = await fetch(`http://127.0.0.1:${g.ports.php}/env.php`, {
        headers: { ...SPOOFED, "X_App_Token": "from-the-app", "X-App-Token": "other spelling" },
      });
      assert.equal(r.status, 200);
      const { server: s } = await r.json() as EnvAnswer;
      assert.equal(s.HTTP_X_APP_TOKEN, "from-the-app", "listed, and its hyphenated twin dropped");
      assert.equal(s.HTTP_X_REAL_IP, "127.0.0.1", "listed, yet the proxy's X-Real-IP wins");
      assert.equal(s.HTTP_X_FORWARDED_FOR, "127.0.0.1");
      assert.equal(s.HTTP_X_FORWARDED_HOST, `127.0.0.1:${g.ports.php}`);
    } finally {
      await g.stop();
      await fpm.stop();
    }
  },
});
