/**
 * Server fields that cannot run here are refused at load with one line naming the field and
 * what to do; a running server given such a config keeps its old one. Fields with no effect in
 * Caddy either (h3 on a plain-HTTP server) load.
 */
import assert from "node:assert/strict";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { startServer } from "../../../lib/server/embed.ts";
import { CLI, DENO_JSON, freePort, ROOT } from "../fixtures/helpers.ts";
import { makePki } from "../http/pki.ts";

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const loadPem = [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }];
const ok = [{ handle: [{ handler: "static_response", body: "ok" }] }];

function config(server: Record<string, unknown>, tls = false): Record<string, unknown> {
  return {
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: ["127.0.0.1:8443"],
            routes: ok,
            automatic_https: { disable: true },
            ...(tls ? { tls_connection_policies: [{}] } : {}),
            ...server,
          },
        },
      },
      ...(tls ? { tls: { certificates: { load_pem: loadPem } } } : {}),
    },
  };
}

async function refused(server: Record<string, unknown>, message: RegExp, tls = false) {
  await assert.rejects(validateConfig(config(server, tls)), (e: Error) => {
    assert.match(e.message, message);
    assert.equal(e.message.split("\n").length, 1, "one line");
    return true;
  });
}

Deno.test("fields: listener_engine deno with a field it cannot serve is refused by name", async () => {
  // timeouts, heads up to 64 KiB and wrappers on cleartext listeners run on the deno engine
  await validateConfig(config({
    listener_engine: "deno",
    read_timeout: "1m",
    read_header_timeout: "10s",
    write_timeout: "1m",
    idle_timeout: "30s",
    max_header_bytes: 4096,
    listener_wrappers: [{ wrapper: "proxy_protocol" }],
  }));
  await validateConfig(config({ listener_engine: "deno", idle_timeout: "30s" }, true));
  await refused(
    { listener_engine: "deno", max_header_bytes: 1 << 20 },
    /listener_engine: "deno" \(Deno's HTTP server\) cannot serve max_header_bytes above 65536; leave listener_engine unset or set "node"/,
  );
  await refused(
    {
      listener_engine: "deno",
      listener_wrappers: [{ wrapper: "proxy_protocol" }, { wrapper: "tls" }],
    },
    /cannot serve listener_wrappers on a TLS server/,
    true,
  );
  await refused(
    { listener_engine: "deno", strict_sni_host: true },
    /cannot serve strict_sni_host on a TLS server/,
    true,
  );
  // strict_sni_host has nothing to check on a plain-HTTP server (no SNI), as in Caddy
  await validateConfig(config({ listener_engine: "deno", strict_sni_host: true }));
});

Deno.test("fields: protocols the listeners cannot speak are refused", async () => {
  // HTTP/3 runs beside TLS listeners (the default set), or alone
  await validateConfig(config({ protocols: ["h1", "h2", "h3"] }, true));
  await validateConfig(config({ protocols: ["h3"] }, true));
  // Caddy serves HTTP/3 only with TLS: on a plain server h3 does nothing there either
  await validateConfig(config({ protocols: ["h1", "h2", "h3"] }));
  await refused(
    { protocols: ["h3"] },
    /no protocol this server can serve over TCP \(add h1 or h2c\)/,
  );
  // h2 or h2c alone: served since Caddy v2.10.1 (fields/protocols.test.ts), on the node engine
  await validateConfig(config({ protocols: ["h2"] }, true));
  await validateConfig(config({ protocols: ["h2c"] }));
  await refused(
    { protocols: ["h2c"], listener_engine: "deno" },
    /"deno" \(Deno's HTTP server\) cannot serve protocols without h1; leave listener_engine unset/,
  );
  await refused({ protocols: ["h1", "h4"] }, /unknown protocol "h4" \(h1, h2, h2c or h3\)/);
  // the node engine speaks HTTP/2 (h2 over TLS, h2c): node-only fields combine with both
  await validateConfig(config({ protocols: ["h1", "h2"], idle_timeout: "1m" }, true));
  await validateConfig(config({ protocols: ["h1", "h2c"], read_timeout: "1m" }));
  await validateConfig(config({ listener_engine: "node", listen_protocols: [["h1", "h2c"]] }));
  await refused(
    { listen_protocols: [["h1"], ["h1"]] },
    /listener protocols count does not match address count: 2 != 1/,
  );
  // h2 listed for a plain node-engine server is what Caddy also leaves out (h2 needs TLS)
  await validateConfig(config({ protocols: ["h1", "h2"], idle_timeout: "1m" }));
});

Deno.test("fields: bad inherited datagram sockets, 0-RTT and pre-2.6 fields are refused", async () => {
  // fd/ (an inherited listening socket) is served on the node engine: parity/fd_listener.test.ts;
  // fdgram/ (an inherited UDP socket) by the HTTP/3 listener: listeners/h3/server.test.ts
  await refused(
    { listen: ["fdgram/{env.CADDY_HTTP3_FD}"] },
    /fdgram\/ takes the number of an inherited UDP socket, got ""/,
  );
  await refused(
    { allow_0rtt: true },
    /allow_0rtt: the HTTP\/3 listener serves no request before the TLS handshake completed/,
  );
  await validateConfig(config({ allow_0rtt: false }));
  await refused({ experimental_http3: true }, /experimental_http3: a field of Caddy before 2\.6/);
  await refused({ allow_h2c: true }, /allow_h2c: a field of Caddy before 2\.6/);
  await refused(
    { keepalive_idle: "500ms" },
    /keepalive_idle: TCP keep-alive times are whole seconds/,
  );
});

Deno.test("fields: listener wrappers out of Caddy's order, or after TLS, are refused", async () => {
  await refused(
    { listener_wrappers: [{ wrapper: "tls" }, { wrapper: "proxy_protocol" }] },
    /it is unnecessary to specify the TLS listener wrapper in the first position/,
  );
  await refused(
    {
      listener_wrappers: [{ wrapper: "http_redirect" }, { wrapper: "tls" }, { wrapper: "tls" }],
    },
    /TLS listener wrapper can only be specified once/,
  );
  await refused(
    { listener_wrappers: [{ wrapper: "proxy_protocol" }] },
    /listener_wrappers\[0\]: proxy_protocol would run after TLS here[^]*list it before \{"wrapper": "tls"\}/,
    true,
  );
  await refused(
    {
      listener_wrappers: [{ wrapper: "proxy_protocol" }, { wrapper: "tls" }, {
        wrapper: "http_redirect",
      }],
    },
    /listener_wrappers\[2\]: http_redirect would run after TLS/,
    true,
  );
  await refused(
    { listener_wrappers: [{ wrapper: "proxy_protocol", fallback_policy: "TRUST" }] },
    /fallback_policy: TRUST is invalid policy/,
  );
  await refused(
    { listener_wrappers: [{ wrapper: "proxy_protocol", allow: ["10.0.0.1"] }] },
    /allow: 10\.0\.0\.1 is not a CIDR range/,
  );
  await refused(
    { listener_wrappers: [{ wrapper: "proxy_protocol", trusted: true }] },
    /caddy\.listeners\.proxy_protocol: unknown field "trusted"/,
  );
  await refused(
    { listener_wrappers: [{ wrapper: "proxy_v3" }] },
    /caddy\.listeners\.proxy_v3/,
  );
  // on a plain server every wrapper reads the raw connection, wherever the marker is
  await validateConfig(config({
    listener_wrappers: [{ wrapper: "http_redirect" }, { wrapper: "tls" }, {
      wrapper: "proxy_protocol",
    }],
  }));
});

Deno.test("fields: keepalive without the FFI permission is refused, naming the flag", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-ffi-" });
  try {
    const file = `${dir}/config.json`;
    await Deno.writeTextFile(file, JSON.stringify(config({ keepalive_interval: "20s" })));
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net",
        "--allow-sys",
        "--allow-run",
        // the database driver's native module may load; nothing else
        `--allow-ffi=${ROOT}node_modules`,
        "--config",
        DENO_JSON,
        CLI,
        "validate",
        "--config",
        file,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, text);
    assert.match(
      text,
      /keepalive_\*: setting TCP keep-alive times needs the FFI permission \(run with --allow-ffi or -A\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fields: a running server given a refused field keeps its config", async () => {
  const port = freePort();
  const cfg = (server: Record<string, unknown>, body: string) => ({
    admin: { disabled: true },
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [{ handle: [{ handler: "static_response", body }] }],
            ...server,
          },
        },
      },
    },
  });
  const srv = await startServer({ config: cfg({}, "old") });
  try {
    const ok = await srv.load(cfg({ listener_engine: "deno", max_header_bytes: 1 << 20 }, "new"))
      .catch(() => false);
    assert.equal(ok, false);
    const r = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await r.text(), "old");
  } finally {
    await srv.stop();
  }
});

Deno.test("fields: reverse_proxy fields that cannot run here are refused by name", async () => {
  const proxy = (o: Record<string, unknown>) =>
    config({
      routes: [{
        handle: [{ handler: "reverse_proxy", upstreams: [{ dial: "127.0.0.1:9" }], ...o }],
      }],
    });
  for (
    const [o, re] of [
      [{ circuit_breaker: { type: "latency" } }, /circuit_breaker: no circuit breaker module/],
      // write_buffer_size, expect_continue_timeout, renegotiation and the connection fields
      // with HTTP/2 are honoured: parity2/proxy_transport_*.test.ts; proxy_protocol:
      // parity2/proxy_protocol_upstream.test.ts
      [
        { transport: { protocol: "http", proxy_protocol: "v3" } },
        /proxy_protocol: unexpected proxy protocol version "v3"/,
      ],
      [
        { transport: { protocol: "http", resolver: { addresses: ["tcp/127.0.0.1:53"] } } },
        /resolver\.addresses: "tcp\/127\.0\.0\.1:53": only udp DNS servers/,
      ],
      [
        { transport: { protocol: "http", keep_alive: { probe_interval: "500ms" } } },
        /probe_interval: TCP keep-alive times are whole seconds/,
      ],
    ] as [Record<string, unknown>, RegExp][]
  ) {
    await assert.rejects(validateConfig(proxy(o)), re);
  }
});

Deno.test("fields: tls session_tickets settings are refused; disable_ocsp_stapling holds", async () => {
  await assert.rejects(
    validateConfig({
      admin: { disabled: true },
      apps: { tls: { session_tickets: { disabled: true } } },
    }),
    /tls\.session_tickets: session ticket keys are kept and rotated by the TLS library here/,
  );
  await validateConfig({
    admin: { disabled: true },
    apps: { tls: { session_tickets: {}, disable_ocsp_stapling: true } },
  });
});
