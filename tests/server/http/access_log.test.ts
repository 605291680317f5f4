import assert from "node:assert/strict";
import { startHttp } from "./harness.ts";
import { raw } from "./raw.ts";

Deno.test("access log: the handled request record field by field, credentials redacted", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: {
          default_logger_name: "log0",
          logger_names: { "named.test": "special" },
          skip_hosts: ["quiet.test"],
        },
        routes: [
          {
            match: [{ path: ["/missing"] }],
            handle: [{ handler: "error", status_code: 404, error: "nope" }],
            terminal: true,
          },
          {
            handle: [{
              handler: "static_response",
              body: "hello",
              headers: { "Set-Cookie": ["sid=secret"], "X-Resp": ["1"] },
            }],
          },
        ],
      },
    },
  });
  try {
    const b = srv.url();
    const port = new URL(b).port;
    const r = await raw(b, "GET", "/path?q=1", {
      host: `site.test:${port}`,
      authorization: "Bearer TOKEN",
      cookie: "a=b",
      "user-agent": "t/1",
    });
    assert.equal(r.status, 200);
    const rec = await srv.waitLog((l) =>
      l.msg === "handled request" && (l.request as { uri: string }).uri === "/path?q=1"
    );
    assert.equal(rec.level, "info");
    assert.equal(typeof rec.ts, "number");
    assert.equal(rec.logger, "http.log.access.log0");
    const req = rec.request as Record<string, unknown>;
    assert.equal(req.remote_ip, "127.0.0.1");
    assert.match(String(req.remote_port), /^\d+$/);
    assert.equal(req.client_ip, "127.0.0.1");
    assert.equal(req.proto, "HTTP/1.1");
    assert.equal(req.method, "GET");
    assert.equal(req.host, `site.test:${port}`);
    assert.equal(req.uri, "/path?q=1");
    const h = req.headers as Record<string, string[]>;
    assert.deepEqual(h["User-Agent"], ["t/1"]);
    assert.deepEqual(h.Authorization, [], "Authorization redacted");
    assert.deepEqual(h.Cookie, [], "Cookie redacted");
    assert.equal(req.tls, undefined, "no tls object over plain HTTP");
    assert.equal(rec.bytes_read, 0);
    assert.equal(rec.user_id, "");
    assert.equal(typeof rec.duration, "number");
    assert.ok((rec.duration as number) >= 0 && (rec.duration as number) < 5);
    assert.equal(rec.size, 5);
    assert.equal(rec.status, 200);
    const rh = rec.resp_headers as Record<string, string[]>;
    assert.deepEqual(rh["Set-Cookie"], [], "Set-Cookie redacted");
    assert.deepEqual(rh["X-Resp"], ["1"]);
    assert.deepEqual(rh["Content-Type"], ["text/plain; charset=utf-8"]);
    assert.deepEqual(rh.Server, ["Gatehouse"]);

    await raw(b, "GET", "/missing", { host: "named.test" });
    const err = await srv.waitLog((l) =>
      l.msg === "handled request" && (l.request as { uri: string }).uri === "/missing"
    );
    assert.equal(err.level, "error", "status >= 400 logs at ERROR");
    assert.equal(err.logger, "http.log.access.special");
    assert.equal(err.status, 404);

    await raw(b, "GET", "/skipped", { host: "quiet.test" });
    await raw(b, "GET", "/after", { host: "x.test" });
    await srv.waitLog((l) => (l.request as { uri?: string })?.uri === "/after");
    assert.ok(!(await srv.logs()).some((l) => (l.request as { uri?: string })?.uri === "/skipped"));
  } finally {
    await srv.stop();
  }
});

Deno.test("listen: several addresses, port ranges and unix sockets", async () => {
  const dir = await Deno.makeTempDir();
  const sock = `${dir}/gh.sock`;
  const { freePort } = await import("./harness.ts");
  let p = freePort();
  // find two consecutive free ports
  for (let i = 0; i < 20; i++) {
    try {
      const l = Deno.listen({ hostname: "127.0.0.1", port: p + 1 });
      l.close();
      break;
    } catch {
      p = freePort();
    }
  }
  const srv = await startHttp({
    servers: {
      s: {
        listen: [`127.0.0.1:${p}-${p + 1}`, `unix/${sock}`],
        routes: [{ handle: [{ handler: "static_response", body: "port {http.request.port}" }] }],
      },
    },
  });
  try {
    assert.equal((await raw(`http://127.0.0.1:${p}`, "GET", "/")).text, `port ${p}`);
    assert.equal((await raw(`http://127.0.0.1:${p + 1}`, "GET", "/")).text, `port ${p + 1}`);
    const client = Deno.createHttpClient(
      { proxy: { transport: "unix", path: sock } } as Deno.CreateHttpClientOptions,
    );
    try {
      const res = await fetch("http://localhost/", { client });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      client.close();
    }
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("access log: bytes_read of a proxied body and user_id after authentication", async () => {
  const bcrypt = (await import("bcryptjs")).default;
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    return new Response(`read ${(await req.arrayBuffer()).byteLength}`);
  });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: {},
        routes: [{
          handle: [
            {
              handler: "authentication",
              providers: {
                http_basic: { accounts: [{ username: "ann", password: bcrypt.hashSync("pw", 4) }] },
              },
            },
            {
              handler: "reverse_proxy",
              upstreams: [{ dial: `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}` }],
            },
          ],
        }],
      },
    },
  });
  try {
    const r = await raw(
      srv.url(),
      "POST",
      "/up",
      { authorization: "Basic " + btoa("ann:pw") },
      "x".repeat(1234),
    );
    assert.equal(r.text, "read 1234");
    const rec = await srv.waitLog((l) =>
      l.msg === "handled request" && (l.request as { uri: string }).uri === "/up"
    );
    assert.equal(rec.logger, "http.log.access");
    assert.equal(rec.bytes_read, 1234);
    assert.equal(rec.user_id, "ann");
    assert.equal(rec.size, 9);
    assert.deepEqual(
      (rec.request as { headers: Record<string, string[]> }).headers.Authorization,
      [],
    );
  } finally {
    await srv.stop();
    await upstream.shutdown();
  }
});

Deno.test("reload under load: no request fails while the config is replaced", async () => {
  const cfg = (body: string) => ({
    servers: {
      s: { listen: ["127.0.0.1:0"], routes: [{ handle: [{ handler: "static_response", body }] }] },
    },
  });
  const srv = await startHttp(cfg("v0"));
  try {
    let stop = false;
    const seen = new Set<string>();
    let failures = 0;
    const reasons: string[] = [];
    const worker = async () => {
      while (!stop) {
        try {
          const res = await fetch(srv.url());
          const text = await res.text();
          seen.add(text);
          if (res.status !== 200) {
            failures++;
            reasons.push(`${res.status} ${text}`);
          }
        } catch (e) {
          failures++;
          reasons.push(String(e));
        }
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    for (let i = 1; i <= 5; i++) {
      await new Promise((r) => setTimeout(r, 30));
      await srv.reload(cfg(`v${i}`));
    }
    // Keep the load on until the last config has answered (a busy machine may take a while).
    for (let waited = 0; !seen.has("v5") && waited < 5000; waited += 10) {
      await new Promise((r) => setTimeout(r, 10));
    }
    stop = true;
    await Promise.all(workers);
    assert.equal(failures, 0, reasons.slice(0, 3).join("; "));
    assert.ok(seen.has("v5"));
  } finally {
    await srv.stop();
  }
});
