/**
 * `reverse_proxy` with the `fastcgi` transport against a real php-fpm (Debian php8.2-fpm) on
 * loopback: what the script sees (path info, query, headers, bodies), large streamed output,
 * stderr capture, unix sockets, timeouts, symlinked roots, and the same CGI environment as
 * Caddy 2.6.2 builds for the same requests.
 */
import assert from "node:assert/strict";
import { freePort, serve } from "../http/harness.ts";
import { caddyAvailable, startCaddy } from "./caddy.ts";
import { phpFpmAvailable, startPhpFpm } from "./php_fpm.ts";
import { type EnvAnswer, SCRIPTS } from "./php_scripts.ts";

const ignore = !phpFpmAvailable();

function fastcgi(root: string, dial: string, extra: Record<string, unknown> = {}) {
  return {
    handler: "reverse_proxy",
    transport: { protocol: "fastcgi", root, split_path: [".php"], ...extra },
    upstreams: [{ dial }],
  };
}

async function sha256(data: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", data as BufferSource);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function pattern(n: number): Uint8Array {
  const block = new TextEncoder().encode("0123456789abcdef");
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = block[i % 16];
  return out;
}

Deno.test({
  name: "fastcgi: php-fpm serves scripts with path info, query, headers and bodies",
  ignore,
  async fn(t) {
    const fpm = await startPhpFpm(SCRIPTS);
    const srv = await serve([{
      match: [{ path: ["/nocapture/*"] }],
      handle: [
        { handler: "rewrite", strip_path_prefix: "/nocapture" },
        fastcgi(fpm.root, fpm.dial),
      ],
    }, {
      handle: [fastcgi(fpm.root, fpm.dial, {
        env: { APP_ENV: "test", FROM_HOST: "{http.request.host}" },
        capture_stderr: true,
      })],
    }]);
    try {
      await t.step("GET with path info, query and headers", async () => {
        const r = await fetch(`${srv.url()}/env.php/users/42/a%20b?x=1&y=two`, {
          headers: { "X-Custom": "v1", "Proxy": "http://evil.example", "Accept": "a/b" },
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get("x-script"), "env");
        assert.equal(r.headers.get("content-type"), "application/json");
        const { server: s, get } = await r.json() as EnvAnswer;
        assert.equal(s.SCRIPT_NAME, "/env.php");
        assert.equal(s.SCRIPT_FILENAME, `${fpm.root}/env.php`);
        assert.equal(s.PATH_INFO, "/users/42/a b");
        assert.equal(s.PATH_TRANSLATED, `${fpm.root}/users/42/a b`);
        assert.equal(s.DOCUMENT_ROOT, fpm.root);
        assert.equal(s.DOCUMENT_URI, "/env.php");
        assert.equal(s.QUERY_STRING, "x=1&y=two");
        assert.deepEqual(get, { x: "1", y: "two" });
        assert.equal(s.REQUEST_URI, "/env.php/users/42/a%20b?x=1&y=two");
        assert.equal(s.REQUEST_METHOD, "GET");
        assert.equal(s.HTTP_X_CUSTOM, "v1");
        assert.equal(s.HTTP_ACCEPT, "a/b");
        assert.equal(s.HTTP_PROXY, undefined, "a Proxy header never becomes HTTP_PROXY");
        assert.equal(s.HTTP_X_FORWARDED_FOR, "127.0.0.1");
        assert.equal(s.APP_ENV, "test");
        assert.equal(s.FROM_HOST, "127.0.0.1");
        assert.equal(s.REMOTE_ADDR, "127.0.0.1");
        assert.equal(s.SERVER_PORT, String(srv.ports()[0]));
        assert.equal(s.SERVER_NAME, "127.0.0.1");
        assert.equal(s.GATEWAY_INTERFACE, "CGI/1.1");
        assert.match(s.SERVER_SOFTWARE, /^Gatehouse\//);
        assert.equal(s.REQUEST_SCHEME, "http");
        assert.equal(s.HTTPS, undefined);
      });

      await t.step("POST form and raw bodies", async () => {
        let r = await fetch(`${srv.url()}/env.php`, {
          method: "POST",
          body: new URLSearchParams({ name: "Zoë", list: "a&b" }),
        });
        let a = await r.json() as EnvAnswer;
        assert.equal(a.server.REQUEST_METHOD, "POST");
        assert.match(a.server.CONTENT_TYPE, /^application\/x-www-form-urlencoded/);
        assert.deepEqual(a.post, { name: "Zoë", list: "a&b" });
        assert.equal(a.server.CONTENT_LENGTH, String(a.input.length));

        r = await fetch(`${srv.url()}/env.php`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ k: "v" }),
        });
        a = await r.json() as EnvAnswer;
        assert.equal(a.server.REQUEST_METHOD, "PUT");
        assert.equal(a.input, '{"k":"v"}');
        assert.equal(a.server.CONTENT_LENGTH, "9");
      });

      await t.step(
        "a chunked body is buffered to learn its length; over 1 MiB is 411",
        async () => {
          const stream = (parts: Uint8Array[]) =>
            new ReadableStream<Uint8Array>({
              pull(ctl) {
                const p = parts.shift();
                if (p) ctl.enqueue(p);
                else ctl.close();
              },
            });
          let r = await fetch(`${srv.url()}/mark.php?id=small`, {
            method: "POST",
            body: stream([pattern(1000), pattern(2000)]),
            duplex: "half",
          } as RequestInit);
          assert.equal(r.status, 200);
          assert.equal(await r.text(), "3000");
          r = await fetch(`${srv.url()}/mark.php?id=huge`, {
            method: "POST",
            body: stream(Array.from({ length: 20 }, () => pattern(64 * 1024))),
            duplex: "half",
          } as RequestInit);
          assert.equal(r.status, 411);
          await r.body?.cancel();
          assert.ok(await Deno.stat(`${fpm.root}/ran-small`));
          await assert.rejects(Deno.stat(`${fpm.root}/ran-huge`), "the refused body never ran");
        },
      );

      await t.step("large output streams whole", async () => {
        const n = 8 * 1024 * 1024 + 7;
        const r = await fetch(`${srv.url()}/big.php?n=${n}`);
        assert.equal(r.status, 200);
        const body = new Uint8Array(await r.arrayBuffer());
        assert.equal(body.length, n);
        assert.equal(await sha256(body), await sha256(pattern(n)));
      });

      await t.step("HEAD gets the head only; status from the script", async () => {
        let r = await fetch(`${srv.url()}/env.php`, { method: "HEAD" });
        assert.equal(r.status, 200);
        assert.equal(r.headers.get("x-script"), "env");
        assert.equal(await r.text(), "");
        r = await fetch(`${srv.url()}/stderr.php?s=418`);
        assert.equal(r.status, 418);
        assert.equal(await r.text(), "done");
      });

      await t.step("stderr is logged with capture_stderr: WARN, ERROR for 4xx/5xx", async () => {
        let r = await fetch(`${srv.url()}/stderr.php?m=first&s=200`);
        assert.equal(await r.text(), "done");
        const warn = await srv.waitLog((l) =>
          l.logger === "http.reverse_proxy.transport.fastcgi" && String(l.body).includes("first")
        );
        assert.equal(warn.level, "warn");
        assert.equal(warn.msg, "stderr");
        r = await fetch(`${srv.url()}/stderr.php?m=second&s=500`);
        assert.equal(r.status, 500);
        await r.body?.cancel();
        const err = await srv.waitLog((l) => String(l.body ?? "").includes("second"));
        assert.equal(err.level, "error");
        // without capture_stderr nothing is logged
        r = await fetch(`${srv.url()}/nocapture/stderr.php?m=third`);
        assert.equal(await r.text(), "done");
        await new Promise((res) => setTimeout(res, 200));
        assert.ok(!(await srv.logs()).some((l) => String(l.body ?? "").includes("third")));
      });
    } finally {
      await srv.stop();
      await fpm.stop();
    }
  },
});

Deno.test({
  name: "fastcgi: unix socket, dial failure 502, read_timeout 504, resolve_root_symlink",
  ignore,
  async fn() {
    const fpm = await startPhpFpm(SCRIPTS, { unix: true });
    const link = `${fpm.root}-link`;
    await Deno.symlink(fpm.root, link);
    const srv = await serve([
      { match: [{ path: ["/dead/*"] }], handle: [fastcgi(fpm.root, `127.0.0.1:${freePort()}`)] },
      {
        match: [{ path: ["/timeout/*"] }],
        handle: [
          { handler: "rewrite", strip_path_prefix: "/timeout" },
          fastcgi(fpm.root, fpm.dial, { read_timeout: "300ms" }),
        ],
      },
      {
        match: [{ path: ["/real/*"] }],
        handle: [
          { handler: "rewrite", strip_path_prefix: "/real" },
          fastcgi(link, fpm.dial, { resolve_root_symlink: true }),
        ],
      },
      { handle: [fastcgi(link, fpm.dial)] },
    ]);
    try {
      let r = await fetch(`${srv.url()}/env.php`);
      const a = await r.json() as EnvAnswer;
      assert.equal(a.server.DOCUMENT_ROOT, link, "the symlink is kept by default");
      assert.equal(a.server.REMOTE_ADDR, "127.0.0.1");
      r = await fetch(`${srv.url()}/real/env.php`);
      assert.equal((await r.json() as EnvAnswer).server.DOCUMENT_ROOT, await Deno.realPath(link));
      r = await fetch(`${srv.url()}/dead/env.php`);
      assert.equal(r.status, 502);
      await r.body?.cancel();
      r = await fetch(`${srv.url()}/timeout/slow.php?ms=50`);
      assert.equal(await r.text(), "late");
      r = await fetch(`${srv.url()}/timeout/slow.php?ms=2000`);
      assert.equal(r.status, 504);
      await r.body?.cancel();
    } finally {
      await srv.stop();
      await Deno.remove(link).catch(() => {});
      await fpm.stop();
    }
  },
});

Deno.test({
  name: "fastcgi: the script sees the same CGI environment as under Caddy 2.6.2",
  ignore: ignore || !caddyAvailable(),
  async fn() {
    const fpm = await startPhpFpm(SCRIPTS);
    const route = fastcgi(fpm.root, fpm.dial, { env: { SITE: "{http.request.host}" } });
    const caddy = await startCaddy([{ handle: [route] }]);
    const srv = await serve([{ handle: [route] }]);
    // differ by design: who answers, its port, SERVER_ADDR (Caddy 2.6.2 does not set it) and
    // HTTP_VIA (current Caddy's Via, since v2.10.0, which Caddy 2.6.2 does not send)
    const volatile = ["SERVER_SOFTWARE", "SERVER_PORT", "REMOTE_PORT", "SERVER_ADDR", "HTTP_VIA"];
    const comparable = (a: EnvAnswer, port: number) => {
      const s = { ...a.server };
      for (const k of volatile) delete s[k];
      for (const [k, v] of Object.entries(s)) s[k] = v.replaceAll(String(port), "PORT");
      return { ...a, server: s };
    };
    const requests: [string, RequestInit][] = [
      ["/env.php", {}],
      ["/env.php/p/a%2Fb/%C3%A9?q=%20x&q=y", { headers: { "x-a": "1", "x-b": "two words" } }],
      ["/ENV.PHP/upper", {}],
      ["/env.PHP/upper/x.php/y", {}],
      ["/sub/../env.php?x", {}],
      ["/env.php", { method: "POST", body: "a=1&b=2" }],
      ["/env.php", { method: "DELETE", headers: { "content-type": "text/plain" }, body: "x" }],
      ["/env.php", { method: "OPTIONS" }],
    ];
    try {
      for (const [path, init] of requests) {
        const [c, g] = await Promise.all([
          fetch(caddy.url + path, init),
          fetch(srv.url() + path, init),
        ]);
        assert.equal(g.status, c.status, path);
        const [ct, gt] = [await c.text(), await g.text()];
        if (!ct.startsWith("{")) {
          assert.equal(gt, ct, path); // php-fpm's own answer (a script that does not exist)
          continue;
        }
        const [cj, gj] = [JSON.parse(ct) as EnvAnswer, JSON.parse(gt) as EnvAnswer];
        assert.deepEqual(
          comparable(gj, srv.ports()[0]),
          comparable(cj, caddy.port),
          `${init.method ?? "GET"} ${path}`,
        );
      }
    } finally {
      await srv.stop();
      await caddy.stop();
      await fpm.stop();
    }
  },
});
