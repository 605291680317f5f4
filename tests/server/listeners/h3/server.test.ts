/**
 * HTTP/3 in the whole server: an HTTPS server speaks it by default on its port (UDP) and says
 * so in `Alt-Svc` on its HTTP/1.1 and HTTP/2 answers (Caddy 2.6.2 as the oracle for the header),
 * only for hosts the QUIC listener's certificate covers; `protocols` without h3 binds no UDP
 * socket; h3 alone binds no TCP socket; requests over HTTP/3 reach the same routes with
 * `{http.request.proto}` and the access log saying `HTTP/3.0`; a reload keeps the UDP socket
 * and its connections; an `fdgram/` address serves HTTP/3 on an inherited socket; TLS client
 * authentication leaves HTTP/3 out (refused when listed).
 */
import assert from "node:assert/strict";
import { startServer } from "../../../../lib/server/embed.ts";
import { validateConfig } from "../../../../lib/cli/validate.ts";
import { H3ClientConnection } from "../../../../lib/server/listeners/h3/client.ts";
import { CLI, DENO_JSON, tempEnv } from "../../fixtures/helpers.ts";
import { freeTcpUdpPort, gtlsclient, testPki, text, udpBound } from "./_h3.ts";

const dec = new TextDecoder();

interface Curl {
  status: number;
  headers: Map<string, string[]>;
  body: string;
}

async function curl(url: string, ca: string, extra: string[] = []): Promise<Curl> {
  const host = new URL(url);
  const out = await new Deno.Command("curl", {
    args: [
      "-sS",
      "-D",
      "-",
      "--max-time",
      "10",
      "--cacert",
      ca,
      "--resolve",
      `${host.hostname}:${host.port}:127.0.0.1`,
      ...extra,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const t = dec.decode(out.stdout);
  const split = t.indexOf("\r\n\r\n");
  const head = t.slice(0, split).split("\r\n");
  const headers = new Map<string, string[]>();
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    const k = line.slice(0, i).toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), line.slice(i + 1).trim()]);
  }
  return {
    status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(head[0])?.[1] ?? 0),
    headers,
    body: t.slice(split + 4),
  };
}

async function files() {
  const p = await testPki();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-h3-" });
  await Deno.writeTextFile(`${dir}/ca.pem`, p.caPem);
  return { p, dir, ca: `${dir}/ca.pem` };
}

function site(
  port: number,
  server: Record<string, unknown> = {},
  more: Record<string, unknown> = {},
) {
  return {
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    ...more,
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [{
              handle: [{ handler: "static_response", body: "via {http.request.proto}" }],
            }],
            ...server,
          },
        },
      },
      tls: { certificates: { load_pem: [] as unknown[] } },
      ...((more.apps as Record<string, unknown>) ?? {}),
    },
  };
}

async function h3(port: number, ca: string, serverName = "localhost") {
  return await H3ClientConnection.connect({
    hostname: "127.0.0.1",
    port,
    serverName,
    caCerts: [ca],
  });
}

Deno.test("h3 server: HTTPS speaks HTTP/3 by default and advertises it on HTTP/1.1 and HTTP/2", async () => {
  const { p, dir, ca } = await files();
  const port = freeTcpUdpPort();
  const log = `${dir}/access.log`;
  const cfg = site(port, { logs: {} }, {
    logging: {
      logs: {
        default: { level: "ERROR" },
        access: {
          writer: { output: "file", filename: log },
          encoder: { format: "json" },
          include: ["http.log.access"],
        },
      },
    },
  });
  (cfg.apps.tls.certificates.load_pem as unknown[]).push({
    certificate: p.leafs.localhost.cert,
    key: p.leafs.localhost.key,
  });
  const srv = await startServer({ config: cfg });
  try {
    const one = await curl(`https://localhost:${port}/`, ca, ["--http1.1"]);
    assert.equal(one.body, "via HTTP/1.1");
    assert.deepEqual(one.headers.get("alt-svc"), [`h3=":${port}"; ma=2592000`]);
    const two = await curl(`https://localhost:${port}/`, ca, ["--http2"]);
    assert.equal(two.body, "via HTTP/2.0");
    assert.deepEqual(two.headers.get("alt-svc"), [`h3=":${port}"; ma=2592000`]);

    const c = await h3(port, p.caPem);
    const res = await c.request({ method: "GET", authority: `localhost:${port}`, path: "/x" });
    assert.equal(res.status, 200);
    assert.equal(await text(res.body), "via HTTP/3.0");
    const fields = new Map(res.headers);
    assert.equal(fields.get("server"), "Gatehouse");
    assert.equal(fields.has("alt-svc"), false, "no Alt-Svc over HTTP/3 itself");
    c.close();

    // an independent client: ngtcp2 + nghttp3
    const g = await gtlsclient(port, "/g");
    assert.equal(g.status, 200, g.output.slice(-2000));
    assert.equal(dec.decode(g.body), "via HTTP/3.0");

    let entries: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && entries.length < 4; i++) {
      await new Promise((r) => setTimeout(r, 20));
      entries = (await Deno.readTextFile(log).catch(() => "")).trim().split("\n").filter(Boolean)
        .map((l) => JSON.parse(l));
    }
    const protos = entries.map((e) => (e.request as Record<string, unknown>).proto);
    assert.deepEqual(protos, ["HTTP/1.1", "HTTP/2.0", "HTTP/3.0", "HTTP/3.0"]);
    const tls = (entries[2].request as Record<string, Record<string, unknown>>).tls;
    assert.equal(tls.proto, "h3");
    assert.equal(tls.server_name, "localhost");
    assert.equal(tls.version, 0x0304);
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 server: Alt-Svc is the same header Caddy 2.6.2 sends, and `header -Alt-Svc` removes it", async () => {
  const { p, dir, ca } = await files();
  await Deno.writeTextFile(`${dir}/cert.pem`, p.leafs.localhost.cert);
  await Deno.writeTextFile(`${dir}/key.pem`, p.leafs.localhost.key);
  const ours = freeTcpUdpPort();
  const theirs = freeTcpUdpPort();
  const routes = [
    {
      match: [{ path: ["/quiet"] }],
      handle: [
        { handler: "headers", response: { deferred: true, delete: ["Alt-Svc"] } },
        { handler: "static_response", body: "quiet" },
      ],
    },
    { handle: [{ handler: "static_response", body: "loud" }] },
  ];
  const cfg = (port: number) => ({
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes,
          },
        },
      },
      tls: {
        certificates: { load_files: [{ certificate: `${dir}/cert.pem`, key: `${dir}/key.pem` }] },
      },
    },
  });
  await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(cfg(theirs)));
  const caddy = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    env: { XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/cfg`, HOME: dir },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const srv = await startServer({ config: cfg(ours) });
  try {
    for (let i = 0; i < 200; i++) {
      if ((await curl(`https://localhost:${theirs}/`, ca, ["--http1.1"])).status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const flag of ["--http1.1", "--http2"]) {
      for (const path of ["/", "/quiet"]) {
        const a = await curl(`https://localhost:${ours}${path}`, ca, [flag]);
        const b = await curl(`https://localhost:${theirs}${path}`, ca, [flag]);
        assert.equal(a.body, b.body);
        const want = b.headers.get("alt-svc")?.map((v) => v.replace(`:${theirs}`, `:${ours}`));
        assert.deepEqual(a.headers.get("alt-svc"), want, `${flag} ${path}`);
      }
    }
    // and Caddy's HTTP/3 answer carries no Alt-Svc either
    const g = await gtlsclient(theirs, "/");
    assert.equal(g.status, 200);
    assert.equal(g.headers.some(([k]) => k === "alt-svc"), false);
  } finally {
    caddy.kill("SIGTERM");
    await caddy.output();
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 server: without h3 in protocols no UDP socket; with h3 alone no TCP socket", async () => {
  const { p, dir, ca } = await files();
  const port = freeTcpUdpPort();
  const pem = { certificate: p.leafs.localhost.cert, key: p.leafs.localhost.key };
  const cfg = site(port, { protocols: ["h1", "h2"] });
  cfg.apps.tls.certificates.load_pem.push(pem);
  let srv = await startServer({ config: cfg });
  try {
    const one = await curl(`https://localhost:${port}/`, ca, ["--http1.1"]);
    assert.equal(one.status, 200);
    assert.equal(one.headers.has("alt-svc"), false);
    assert.equal(udpBound(port), false);
  } finally {
    await srv.stop();
  }
  const only = site(port, { listen_protocols: [["h3"]] });
  only.apps.tls.certificates.load_pem.push(pem);
  srv = await startServer({ config: only });
  try {
    await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
    const c = await h3(port, p.caPem);
    const res = await c.request({ method: "GET", authority: `localhost:${port}`, path: "/" });
    assert.equal(await text(res.body), "via HTTP/3.0");
    c.close();
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 server: Alt-Svc only for hosts the QUIC listener's one certificate covers", async () => {
  const { p, dir, ca } = await files();
  const port = freeTcpUdpPort();
  const cfg = site(port, {
    routes: [
      { match: [{ host: ["a.test"] }], handle: [{ handler: "static_response", body: "a" }] },
      { match: [{ host: ["x.a.test"] }], handle: [{ handler: "static_response", body: "x" }] },
      { match: [{ host: ["b.test"] }], handle: [{ handler: "static_response", body: "b" }] },
    ],
  });
  cfg.apps.tls.certificates.load_pem.push(
    { certificate: p.leafs.a.cert, key: p.leafs.a.key },
    { certificate: p.leafs.b.cert, key: p.leafs.b.key },
  );
  const srv = await startServer({ config: cfg });
  try {
    // a.test's certificate covers two of the three names: the QUIC listener holds it
    let a: Curl | undefined;
    for (let i = 0; i < 100; i++) {
      a = await curl(`https://a.test:${port}/`, ca, ["--http1.1"]);
      if (a.headers.has("alt-svc")) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(a!.headers.get("alt-svc"), [`h3=":${port}"; ma=2592000`]);
    const x = await curl(`https://x.a.test:${port}/`, ca, ["--http1.1"]);
    assert.deepEqual(x.headers.get("alt-svc"), [`h3=":${port}"; ma=2592000`]);
    const b = await curl(`https://b.test:${port}/`, ca, ["--http1.1"]);
    assert.equal(b.body, "b");
    assert.equal(b.headers.has("alt-svc"), false, "b.test's certificate is not the QUIC one");
    const c = await h3(port, p.caPem, "a.test");
    const res = await c.request({ method: "GET", authority: "a.test", path: "/" });
    assert.equal(await text(res.body), "a");
    c.close();
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 server: a reload keeps the UDP socket and the open HTTP/3 connections", async () => {
  const { p, dir } = await files();
  const port = freeTcpUdpPort();
  const cfg = (body: string) => {
    const c = site(port, { routes: [{ handle: [{ handler: "static_response", body }] }] });
    c.apps.tls.certificates.load_pem.push({
      certificate: p.leafs.localhost.cert,
      key: p.leafs.localhost.key,
    });
    return c;
  };
  const srv = await startServer({ config: cfg("first") });
  try {
    const c = await h3(port, p.caPem);
    const get = async () =>
      await text((await c.request({ method: "GET", authority: "localhost", path: "/" })).body);
    assert.equal(await get(), "first");
    assert.ok(await srv.load(cfg("second")));
    assert.equal(await get(), "second", "the same connection, the new config");
    assert.equal(c.goaway, -1);
    c.close();
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 server: TLS client authentication leaves HTTP/3 out, and refuses it when listed", async () => {
  const { p } = await files();
  const port = freeTcpUdpPort();
  const policies = [{ client_authentication: { mode: "request" } }];
  const cfg = site(port, { tls_connection_policies: policies });
  cfg.apps.tls.certificates.load_pem.push({
    certificate: p.leafs.localhost.cert,
    key: p.leafs.localhost.key,
  });
  await validateConfig(cfg);
  const listed = site(port, { tls_connection_policies: policies, protocols: ["h1", "h2", "h3"] });
  listed.apps.tls.certificates.load_pem.push({
    certificate: p.leafs.localhost.cert,
    key: p.leafs.localhost.key,
  });
  await assert.rejects(
    validateConfig(listed),
    /protocols: "h3" cannot be served here: the HTTP\/3 listener cannot ask clients for certificates/,
  );
  const srv = await startServer({ config: cfg });
  try {
    assert.equal(udpBound(port), false);
  } finally {
    await srv.stop();
  }
});

const PARENT = `
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
fd = os.dup(s.fileno())
os.set_inheritable(fd, True)
s.close()
os.environ["GATEHOUSE_TEST_FDGRAM"] = str(fd)
print("port", port, flush=True)
os.execvp(sys.argv[1], sys.argv[1:])
`;

Deno.test("h3 server: an fdgram/ address serves HTTP/3 on the inherited UDP socket", async () => {
  const { p, dir } = await files();
  const t = await tempEnv();
  const config = site(0, {
    listen: ["fdgram/{env.GATEHOUSE_TEST_FDGRAM}"],
    routes: [{ handle: [{ handler: "static_response", body: "inherited {http.request.proto}" }] }],
  });
  config.apps.tls.certificates.load_pem.push({
    certificate: p.leafs.localhost.cert,
    key: p.leafs.localhost.key,
  });
  const file = `${dir}/config.json`;
  await Deno.writeTextFile(file, JSON.stringify(config));
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      PARENT,
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      DENO_JSON,
      CLI,
      "run",
      "-c",
      file,
    ],
    env: t.env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let seen!: (p: number) => void;
  const portSeen = new Promise<number>((r) => (seen = r));
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) {
      out += dec.decode(chunk);
      const m = /^port (\d+)$/m.exec(out);
      if (m) seen(Number(m[1]));
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  try {
    const port = await portSeen;
    let body = "";
    // (until the config started, the listener answers 503: no server is configured yet)
    for (let i = 0; i < 100 && body !== "inherited HTTP/3.0"; i++) {
      try {
        const c = await H3ClientConnection.connect({
          hostname: "127.0.0.1",
          port,
          serverName: "localhost",
          caCerts: [p.caPem],
          maxIdleTimeout: 2000,
        });
        body = await text(
          (await c.request({ method: "GET", authority: "localhost", path: "/" })).body,
        );
        c.close();
      } catch { /* not bound yet */ }
      if (body !== "inherited HTTP/3.0") await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(body, "inherited HTTP/3.0", out);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* it ended */ }
    await child.status;
    await drained;
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(t.dir, { recursive: true }).catch(() => {});
  }
});
