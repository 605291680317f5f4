/**
 * HTTPS serving: the `tls` app's `load_files` / `load_pem` certificates, a server's
 * `tls_connection_policies`, the access log's `request.tls` object, reloads, refused options.
 * A CA and a `localhost`/127.0.0.1 leaf are generated at test time with @peculiar/x509.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort, type LogRecord } from "./harness.ts";
import { makePki } from "./pki.ts";

const pki = await makePki({
  local: { dns: ["localhost"], ip: ["127.0.0.1"] },
  other: { dns: ["other.test"] },
});

interface Tls {
  port: number;
  logs(): Promise<LogRecord[]>;
  waitLog(uri: string): Promise<LogRecord>;
  load(apps: Record<string, unknown>): Promise<boolean>;
  validate(apps: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

function httpApp(port: number, body: string, policies: unknown[] = [{}]) {
  return {
    servers: {
      srv0: {
        listen: [`127.0.0.1:${port}`],
        logs: {},
        tls_connection_policies: policies,
        routes: [{ handle: [{ handler: "static_response", body }] }],
      },
    },
  };
}

async function start(apps: (port: number) => Record<string, unknown>): Promise<Tls> {
  const logFile = await Deno.makeTempFile({ prefix: "gatehouse-tls-log-", suffix: ".jsonl" });
  const port = freePort();
  const full = (a: Record<string, unknown>) => ({
    logging: {
      logs: {
        default: {
          writer: { output: "file", filename: logFile, roll_disabled: true },
          encoder: { format: "json" },
          level: "INFO",
        },
      },
    },
    apps: a,
  });
  const server = await startServer({ config: full(apps(port)) });
  const logs = async () =>
    (await Deno.readTextFile(logFile)).split("\n").filter(Boolean).map((l) =>
      JSON.parse(l) as LogRecord
    );
  return {
    port,
    logs,
    async waitLog(uri) {
      const end = Date.now() + 3000;
      while (true) {
        const found = (await logs()).find((r) =>
          r.msg === "handled request" && (r.request as { uri: string }).uri === uri
        );
        if (found) return found;
        if (Date.now() > end) throw new Error(`no access log record for ${uri}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    load: (a) => server.load(full(a)),
    validate: (a) => server.validate(full(a)),
    async stop() {
      await server.stop();
      await Deno.remove(logFile).catch(() => {});
    },
  };
}

/** GET over HTTPS trusting only the test CA; `http1` forces HTTP/1.1 (else ALPN picks h2). */
async function get(url: string, http1 = false): Promise<{ status: number; body: string }> {
  const client = Deno.createHttpClient({
    caCerts: [pki.caPem],
    ...(http1 ? { http2: false } : {}),
  });
  try {
    const res = await fetch(url, { client });
    return { status: res.status, body: await res.text() };
  } finally {
    client.close();
  }
}

async function writePems(): Promise<{ dir: string; cert: string; key: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-tls-" });
  await Deno.writeTextFile(`${dir}/local.crt`, pki.leafs.local.cert);
  await Deno.writeTextFile(`${dir}/local.key`, pki.leafs.local.key);
  return { dir, cert: `${dir}/local.crt`, key: `${dir}/local.key` };
}

Deno.test("tls: load_files certificate serves HTTPS, access log tls object field by field", async () => {
  const files = await writePems();
  const tlsApp = {
    certificates: { load_files: [{ certificate: files.cert, key: files.key, tags: ["main"] }] },
  };
  const srv = await start((port) => ({ tls: tlsApp, http: httpApp(port, "hello tls") }));
  try {
    const h2 = await get(`https://localhost:${srv.port}/h2?x=1`);
    assert.deepEqual(h2, { status: 200, body: "hello tls" });
    const rec = await srv.waitLog("/h2?x=1");
    const req = rec.request as Record<string, unknown>;
    assert.equal(req.proto, "HTTP/2.0");
    assert.equal(req.host, `localhost:${srv.port}`);
    assert.deepEqual(req.tls, {
      resumed: false,
      version: 0,
      cipher_suite: 0,
      proto: "h2",
      server_name: "localhost",
    });

    const h1 = await get(`https://localhost:${srv.port}/h1`, true);
    assert.deepEqual(h1, { status: 200, body: "hello tls" });
    const rec1 = (await srv.waitLog("/h1")).request as Record<string, unknown>;
    assert.equal(rec1.proto, "HTTP/1.1");
    const t1 = rec1.tls as Record<string, unknown>;
    assert.equal(t1.proto, "http/1.1");
    assert.equal(t1.server_name, "localhost");
    assert.equal(t1.resumed, false);
    assert.equal(t1.version, 0);
    assert.equal(t1.cipher_suite, 0);

    // By IP address: clients send no SNI for IP literals, so server_name is empty.
    await get(`https://127.0.0.1:${srv.port}/by-ip`, true);
    const t2 = ((await srv.waitLog("/by-ip")).request as Record<string, unknown>).tls as Record<
      string,
      unknown
    >;
    assert.equal(t2.server_name, "");

    // Plain HTTP on a TLS listener gets Go's (Caddy's) 400 (tests/server/tls/plain_http.test.ts)
    const plain = await fetch(`http://127.0.0.1:${srv.port}/plain`);
    assert.equal(plain.status, 400);
    assert.equal(await plain.text(), "Client sent an HTTP request to an HTTPS server.\n");
  } finally {
    await srv.stop();
    await Deno.remove(files.dir, { recursive: true });
  }
});

Deno.test("tls: listener_engine node reports the real TLS session (version, cipher suite, SNI, ALPN)", async () => {
  const files = await writePems();
  const tlsApp = {
    certificates: { load_files: [{ certificate: files.cert, key: files.key, tags: ["main"] }] },
  };
  const srv = await start((port) => {
    const http = httpApp(port, "v={http.request.tls.version} c={http.request.tls.cipher_suite}");
    (http.servers.srv0 as Record<string, unknown>).listener_engine = "node";
    return { tls: tlsApp, http };
  });
  try {
    // The client offers h2 and http/1.1; this engine takes h2 (the server lists it by default).
    const r = await get(`https://localhost:${srv.port}/node?x=1`);
    assert.equal(r.status, 200);
    const rec = (await srv.waitLog("/node?x=1")).request as Record<string, unknown>;
    assert.equal(rec.proto, "HTTP/2.0");
    const t = rec.tls as Record<string, unknown>;
    assert.equal(t.version, 0x0304, "TLS 1.3, as Go numbers it");
    assert.ok(
      [0x1301, 0x1302, 0x1303].includes(t.cipher_suite as number),
      `a TLS 1.3 suite, got ${t.cipher_suite}`,
    );
    assert.equal(t.proto, "h2");
    assert.equal(t.server_name, "localhost");
    assert.equal(t.resumed, false);
    assert.equal(r.body, `v=772 c=${t.cipher_suite}`);

    await get(`https://127.0.0.1:${srv.port}/node-ip`, true);
    const t2 = ((await srv.waitLog("/node-ip")).request as Record<string, unknown>).tls as Record<
      string,
      unknown
    >;
    assert.equal(t2.server_name, "", "no SNI for an IP address");
    assert.equal(t2.version, 0x0304);
  } finally {
    await srv.stop();
    await Deno.remove(files.dir, { recursive: true });
  }
});

Deno.test("tls: reverse_proxy to TLS upstreams (insecure_skip_verify), plain requests and a relayed upgrade", async () => {
  const { cert, key } = pki.leafs.local;
  const https = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    (req) => new Response(`secure ${new URL(req.url).pathname} host=${req.headers.get("host")}`),
  );
  // A TLS backend on a raw socket: 101, then echoes upper-cased.
  const raw = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const serving = (async () => {
    for await (const conn of raw) {
      (async () => {
        const buf = new Uint8Array(8192);
        let got = "";
        while (!got.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return conn.close();
          got += new TextDecoder().decode(buf.subarray(0, n));
        }
        await conn.write(new TextEncoder().encode(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\n",
        ));
        while (true) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          const up = new TextDecoder().decode(buf.subarray(0, n)).toUpperCase();
          await conn.write(new TextEncoder().encode(up));
        }
        conn.close();
      })().catch(() => {});
    }
  })();
  const dial = (l: { addr: Deno.Addr }) => `127.0.0.1:${(l.addr as Deno.NetAddr).port}`;
  const transport = { protocol: "http", tls: { insecure_skip_verify: true } };
  const srv = await start((port) => ({
    http: {
      servers: {
        srv0: {
          listen: [`127.0.0.1:${port}`],
          listener_engine: "node",
          routes: [
            {
              match: [{ path: ["/up"] }],
              handle: [{ handler: "reverse_proxy", transport, upstreams: [{ dial: dial(raw) }] }],
              terminal: true,
            },
            {
              handle: [{ handler: "reverse_proxy", transport, upstreams: [{ dial: dial(https) }] }],
            },
          ],
        },
      },
    },
  }));
  try {
    const r = await fetch(`http://127.0.0.1:${srv.port}/page`);
    assert.equal(await r.text(), `secure /page host=127.0.0.1:${srv.port}`);

    const conn = await Deno.connect({ hostname: "127.0.0.1", port: srv.port });
    await conn.write(new TextEncoder().encode(
      `GET /up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\n`,
    ));
    const buf = new Uint8Array(8192);
    let got = "";
    while (!got.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      got += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert.match(got, /^HTTP\/1\.1 101 /);
    await conn.write(new TextEncoder().encode("over tls"));
    let echoed = got.split("\r\n\r\n")[1];
    while (echoed.length < 8) {
      const n = await conn.read(buf);
      if (n === null) break;
      echoed += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert.equal(echoed, "OVER TLS");
    conn.close();
  } finally {
    await srv.stop();
    await https.shutdown();
    raw.close();
    await serving.catch(() => {});
  }
});

Deno.test("tls: load_pem certificates, chosen by tag or by sni among several", async () => {
  const loadPem = [
    { certificate: pki.leafs.other.cert, key: pki.leafs.other.key, tags: ["other"] },
    { certificate: pki.leafs.local.cert, key: pki.leafs.local.key, tags: ["main"] },
  ];
  const byTag = [{ certificate_selection: { any_tag: ["main"] } }];
  const srv = await start((port) => ({
    tls: { certificates: { load_pem: loadPem } },
    http: httpApp(port, "by tag", byTag),
  }));
  try {
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "by tag" });
    // match.sni picks the certificate covering the name (load_pem[1]), not the first one.
    const bySni = [{
      match: { sni: ["localhost"] },
      alpn: ["h2", "http/1.1"],
      protocol_min: "tls1.2",
      protocol_max: "tls1.3",
    }];
    await srv.load({
      tls: { certificates: { load_pem: loadPem } },
      http: httpApp(srv.port, "by sni", bySni),
    });
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "by sni" });
    // Without sni or tags, the host matchers of the routes choose.
    const http = httpApp(srv.port, "by host");
    (http.servers.srv0.routes[0] as Record<string, unknown>).match = [{ host: ["localhost"] }];
    await srv.load({ tls: { certificates: { load_pem: loadPem } }, http });
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "by host" });
  } finally {
    await srv.stop();
  }
});

Deno.test("tls: a reload keeps the TLS listener serving; a bad certificate path fails the load", async () => {
  const files = await writePems();
  const tlsApp = { certificates: { load_files: [{ certificate: files.cert, key: files.key }] } };
  const srv = await start((port) => ({ tls: tlsApp, http: httpApp(port, "first") }));
  try {
    assert.equal((await get(`https://localhost:${srv.port}/`)).body, "first");
    await srv.load({ tls: tlsApp, http: httpApp(srv.port, "second") });
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "second" });

    const missing = `${files.dir}/missing.crt`;
    const bad = { certificates: { load_files: [{ certificate: missing, key: files.key }] } };
    await assert.rejects(
      srv.load({ tls: bad, http: httpApp(srv.port, "third") }),
      (e: Error) => {
        assert.match(e.message, /tls\.certificates\.load_files\[0\]/);
        assert.match(e.message, /missing\.crt: no such file/);
        return true;
      },
    );
    await Deno.writeTextFile(`${files.dir}/garbage.crt`, "not a certificate\n");
    const garbage = {
      certificates: { load_files: [{ certificate: `${files.dir}/garbage.crt`, key: files.key }] },
    };
    await assert.rejects(
      srv.load({ tls: garbage, http: httpApp(srv.port, "third") }),
      /load_files\[0\]: certificate: no PEM CERTIFICATE block/,
    );
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "second" });
  } finally {
    await srv.stop();
    await Deno.remove(files.dir, { recursive: true });
  }
});

Deno.test("tls: policy options Deno cannot honour are refused at load with a clear error", async () => {
  const pem = { certificate: pki.leafs.local.cert, key: pki.leafs.local.key };
  const tlsApp = { certificates: { load_pem: [pem] } };
  const srv = await start((port) => ({ tls: tlsApp, http: httpApp(port, "kept") }));
  try {
    const refused: [unknown[], RegExp][] = [
      [[{ alpn: ["http/1.1"] }], /alpn: Deno\.serve always offers exactly "h2" and "http\/1\.1"/],
      [[{ protocol_min: "tls1.3" }], /protocol_min: tls1\.3 cannot be enforced/],
      [[{ protocol_max: "tls1.2" }], /protocol_max: tls1\.2 cannot be enforced/],
      [[{ cipher_suites: ["TLS_AES_128_GCM_SHA256"] }], /cipher_suites: not supported/],
      [[{ client_authentication: { mode: "bogus" } }], /client auth mode not recognized/],
      [[{ match: { remote_ip: { ranges: ["10.0.0.0/8"] } } }], /match\.remote_ip: not supported/],
      [[{ certificate_selection: { any_tag: ["nope"] } }], /no loaded certificate has the tags/],
    ];
    for (const [policies, message] of refused) {
      await assert.rejects(
        srv.validate({ tls: tlsApp, http: httpApp(srv.port, "x", policies) }),
        message,
      );
    }
    // No certificate at all: loads as in Caddy (a warning is logged; handshakes fail).
    await srv.validate({ http: httpApp(srv.port, "x") });
    // (Several certificates by SNI and tls.automation are served: tests/server/tls/.)
    const noKey = { certificates: { load_pem: [{ ...pem, key: pki.leafs.local.cert }] } };
    await assert.rejects(
      srv.validate({ tls: noKey, http: httpApp(srv.port, "x") }),
      /load_pem\[0\]: key: no PEM PRIVATE KEY block/,
    );
    const unix = httpApp(srv.port, "x");
    unix.servers.srv0.listen = ["unix//tmp/gatehouse-tls-test.sock"];
    await assert.rejects(
      srv.validate({ tls: tlsApp, http: unix }),
      /TLS on unix socket listeners is not supported/,
    );
    assert.deepEqual(await get(`https://localhost:${srv.port}/`), { status: 200, body: "kept" });
  } finally {
    await srv.stop();
  }
});
