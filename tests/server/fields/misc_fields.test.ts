/**
 * Behaviour probes for accepted fields that no other test exercised: `disable_openmetrics`,
 * `skip_unmapped_hosts`, `browse.template_file`, `hash_cache`, `observe_catchall_hosts`,
 * `remote_ip.forwarded`, encode levels, `fs`, the internal issuer's `sign_with_root`.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import bcrypt from "bcryptjs";
import { raw } from "../http/raw.ts";

const ok = (body: string) => [{ handle: [{ handler: "static_response", body }] }];

Deno.test("fields: metrics disable_openmetrics answers the text format to an OpenMetrics scraper", async () => {
  const m = (o: Record<string, unknown>) => [{ handle: [{ handler: "metrics", ...o }] }];
  const srv = await startHttp({
    servers: {
      open: { listen: ["127.0.0.1:0"], routes: m({}) },
      text: { listen: ["127.0.0.1:0"], routes: m({ disable_openmetrics: true }) },
    },
  });
  try {
    const accept = { accept: "application/openmetrics-text;version=1.0.0,text/plain;q=0.5" };
    const a = await fetch(srv.url("open"), { headers: accept });
    await a.text();
    assert.match(a.headers.get("content-type")!, /^application\/openmetrics-text/);
    const b = await fetch(srv.url("text"), { headers: accept });
    await b.text();
    assert.match(b.headers.get("content-type")!, /^text\/plain/);
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: logs.skip_unmapped_hosts logs only hosts named in logger_names", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: { logger_names: { "named.test": ["named"] }, skip_unmapped_hosts: true },
        routes: ok("x"),
      },
    },
  });
  try {
    const port = srv.ports()[0];
    for (const host of ["named.test", "other.test"]) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.write(
        new TextEncoder().encode(
          `GET /${host} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
        ),
      );
      await c.read(new Uint8Array(1024));
      c.close();
    }
    await srv.waitLog((r) =>
      r.msg === "handled request" && (r.request as { host: string }).host === "named.test"
    );
    await new Promise((r) => setTimeout(r, 200));
    const hosts = (await srv.logs()).filter((r) => r.msg === "handled request")
      .map((r) => (r.request as { host: string }).host);
    assert.deepEqual(hosts, ["named.test"]);
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: file_server browse.template_file renders listings with that template", async () => {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-browse-" });
  await Deno.writeTextFile(`${root}/a.txt`, "a");
  const tpl = await Deno.makeTempFile({ prefix: "gatehouse-tpl-", suffix: ".html" });
  await Deno.writeTextFile(tpl, "<custom>{{title}} — {{summary}}</custom>");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{ handle: [{ handler: "file_server", root, browse: { template_file: tpl } }] }],
      },
    },
  });
  try {
    assert.equal(
      await (await fetch(srv.url() + "/")).text(),
      "<custom>/ — 0 directories, 1 file</custom>",
    );
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(tpl);
  }
});

Deno.test("fields: authentication hash_cache keeps answers right for right and wrong passwords", async () => {
  const hash = bcrypt.hashSync("hunter2", 4);
  const auth = (cache: boolean) => [{
    handle: [
      {
        handler: "authentication",
        providers: {
          http_basic: {
            accounts: [{ username: "ann", password: hash }],
            hash: { algorithm: "bcrypt" },
            ...(cache ? { hash_cache: {} } : {}),
          },
        },
      },
      { handler: "static_response", body: "in" },
    ],
  }];
  const srv = await startHttp({
    servers: { srv0: { listen: ["127.0.0.1:0"], routes: auth(true) } },
  });
  try {
    const as = async (pw: string) => {
      const r = await fetch(srv.url(), {
        headers: { authorization: `Basic ${btoa(`ann:${pw}`)}` },
      });
      await r.body?.cancel();
      return r.status;
    };
    for (let i = 0; i < 3; i++) {
      assert.equal(await as("hunter2"), 200);
      assert.equal(await as("hunter3"), 401);
    }
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: remote_ip forwarded matches the first X-Forwarded-For address", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ remote_ip: { ranges: ["203.0.113.0/24"], forwarded: true } }],
            handle: [{ handler: "static_response", body: "forwarded match" }],
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "no" }] },
        ],
      },
    },
  });
  try {
    const get = async (xff?: string) =>
      await (await fetch(srv.url(), { headers: xff ? { "x-forwarded-for": xff } : {} })).text();
    assert.equal(await get("203.0.113.9, 10.0.0.1"), "forwarded match");
    assert.equal(await get("198.51.100.1"), "no");
    assert.equal(await get(), "no");
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: metrics observe_catchall_hosts labels hosts no host matcher names", async () => {
  // the registry is the process's: each run asks with its own host name
  const scrape = async (catchall: boolean, host: string) => {
    const srv = await startHttp({
      metrics: { per_host: true, ...(catchall ? { observe_catchall_hosts: true } : {}) },
      servers: {
        srv0: {
          listen: ["127.0.0.1:0"],
          routes: [
            { match: [{ path: ["/metrics"] }], handle: [{ handler: "metrics" }], terminal: true },
            { handle: [{ handler: "static_response", body: "x" }] },
          ],
        },
      },
    });
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port: srv.ports()[0] });
      await c.write(
        new TextEncoder().encode(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      );
      await c.read(new Uint8Array(1024));
      c.close();
      return await (await fetch(`${srv.url()}/metrics`)).text();
    } finally {
      await srv.stop();
    }
  };
  assert.match(
    await scrape(true, "with.test"),
    /caddy_http_requests_total\{[^}]*host="with\.test"/,
  );
  const without = await scrape(false, "without.test");
  assert.doesNotMatch(without, /host="without\.test"/);
  assert.match(without, /host="_other"/);
});

Deno.test("fields: encode gzip and zstd level change how hard the body is compressed", async () => {
  const body = Array.from({ length: 4000 }, (_, i) => `line ${i % 97} of text ${i % 13}\n`).join(
    "",
  );
  const enc = (encodings: Record<string, unknown>) => [{
    handle: [
      { handler: "encode", encodings, match: { headers: { "Content-Type": ["text/*"] } } },
      { handler: "static_response", body, headers: { "Content-Type": ["text/plain"] } },
    ],
  }];
  const srv = await startHttp({
    servers: {
      g1: { listen: ["127.0.0.1:0"], routes: enc({ gzip: { level: 1 } }) },
      g9: { listen: ["127.0.0.1:0"], routes: enc({ gzip: { level: 9 } }) },
      z1: { listen: ["127.0.0.1:0"], routes: enc({ zstd: { level: "fastest" } }) },
      z4: { listen: ["127.0.0.1:0"], routes: enc({ zstd: { level: "best" } }) },
    },
  });
  try {
    // the raw body as sent (fetch would decompress it)
    const size = async (name: string, accept: string) => {
      const r = await raw(srv.url(name), "GET", "/", { "accept-encoding": accept });
      return { n: r.body.length, encoding: r.headers.get("content-encoding") };
    };
    const [g1, g9] = [await size("g1", "gzip"), await size("g9", "gzip")];
    assert.equal(g1.encoding, "gzip");
    assert.ok(g9.n < g1.n, `gzip level 9 (${g9.n}) smaller than level 1 (${g1.n})`);
    const [z1, z4] = [await size("z1", "zstd"), await size("z4", "zstd")];
    assert.equal(z1.encoding, "zstd");
    assert.ok(z4.n < z1.n, `zstd best (${z4.n}) smaller than fastest (${z1.n})`);
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: file_server and the file matcher take fs only as the local disk", async () => {
  const { validateConfig } = await import("../../../lib/cli/validate.ts");
  const cfg = (handle: Record<string, unknown>, match?: Record<string, unknown>) => ({
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          s: {
            listen: ["127.0.0.1:1"],
            routes: [{ ...(match ? { match: [match] } : {}), handle: [handle] }],
          },
        },
      },
    },
  });
  await validateConfig(cfg({ handler: "file_server", root: "/tmp", fs: "{http.vars.fs}" }));
  await assert.rejects(
    validateConfig(cfg({ handler: "file_server", root: "/tmp", fs: "s3" })),
    /file_server\.fs: file system "s3" is not available \(only the local disk\)/,
  );
  await assert.rejects(
    validateConfig(cfg({ handler: "static_response" }, { file: { fs: "embedded" } })),
    /matchers\.file\.fs: file system "embedded" is not available/,
  );
});

Deno.test("fields: the internal issuer's sign_with_root signs leaves with the root", async () => {
  const { tlsServer } = await import("../tls/_helpers.ts");
  const { freePort } = await import("../fixtures/helpers.ts");
  const issuerOf = async (port: number) => {
    const s = new Deno.Command("openssl", {
      args: ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", "a.internal"],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    await s.stdin.close();
    const out = new TextDecoder().decode((await s.output()).stdout);
    return /^\s*i:(.*)$/m.exec(out)?.[1] ?? "";
  };
  const config = (port: number, withRoot: boolean) => ({
    apps: {
      tls: {
        automation: {
          policies: [{ issuers: [{ module: "internal", sign_with_root: withRoot }] }],
        },
      },
      http: {
        http_port: freePort(),
        https_port: port,
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            routes: [{
              match: [{ host: ["a.internal"] }],
              handle: [{ handler: "static_response", body: "hi" }],
            }],
          },
        },
      },
    },
  });
  for (const [withRoot, issuer] of [[true, /Root/], [false, /Intermediate/]] as const) {
    const port = freePort();
    const srv = await tlsServer(config(port, withRoot));
    try {
      assert.match(await issuerOf(port), issuer);
    } finally {
      await srv.stop();
    }
  }
});
