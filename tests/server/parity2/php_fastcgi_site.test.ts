/**
 * `php_fastcgi` as a Gatehousefile site writes it (the directory index redirect, `try_files`
 * with the front controller, the `fastcgi` transport) in front of a real php-fpm, next to
 * `file_server`. Runs once the `file` matcher (`http.matchers.file`) is in the registry.
 */
import assert from "node:assert/strict";
import "../../../lib/server/http/mod.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { startServer } from "../../../lib/server/embed.ts";
import { getModule } from "../../../lib/server/module/mod.ts";
import { freePort } from "../http/harness.ts";
import { phpFpmAvailable, startPhpFpm } from "./php_fpm.ts";
import { type EnvAnswer, SCRIPTS } from "./php_scripts.ts";

Deno.test({
  name: "php_fastcgi site: index redirect, path info, front controller fallback, static files",
  ignore: !phpFpmAvailable() || !getModule("http.matchers.file"),
  async fn() {
    const fpm = await startPhpFpm(SCRIPTS);
    const port = freePort();
    const { result } = adaptGatehousefile(`{
	admin off
	auto_https off
}
:${port} {
	root * ${fpm.root}
	php_fastcgi ${fpm.dial}
	file_server
}
`);
    const srv = await startServer({ config: result });
    const url = `http://127.0.0.1:${port}`;
    try {
      let r = await fetch(`${url}/env.php/a/b?x=1`);
      const a = await r.json() as EnvAnswer;
      assert.equal(a.server.SCRIPT_NAME, "/env.php");
      assert.equal(a.server.PATH_INFO, "/a/b");
      assert.equal(a.server.QUERY_STRING, "x=1");

      r = await fetch(`${url}/sub`, { redirect: "manual" });
      assert.equal(r.status, 308);
      assert.equal(r.headers.get("location"), "/sub/");
      await r.body?.cancel();
      r = await fetch(`${url}/sub/`);
      assert.equal(await r.text(), "sub index /sub/index.php");

      r = await fetch(`${url}/`);
      assert.equal(await r.text(), "front controller /index.php /");
      r = await fetch(`${url}/pretty/route?p=1`);
      assert.equal(await r.text(), "front controller /index.php /pretty/route?p=1");

      r = await fetch(`${url}/static.txt`);
      assert.equal(await r.text(), "plain file\n");
    } finally {
      await srv.stop();
      await fpm.stop();
    }
  },
});
