/**
 * `tls.renegotiation` against `openssl s_server` over TLS 1.2, which renegotiates when told
 * (its `R` command: a HelloRequest, asking for a client certificate) while the proxy waits for
 * the response: `never` (Deno's TLS client) answers with a no_renegotiation alert and the
 * upstream ends the connection (502); `once` renegotiates one time and refuses a second;
 * `freely` renegotiates each time. s_server's `-msg` trace counts the ClientHellos, so a
 * renegotiation that really happened is seen. Then the corpus's `reverse_proxy_options`
 * transport (renegotiation `freely`, HTTP/2 over TLS through OpenSSL, every connection field)
 * runs against Node's HTTP/2 server.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { makePki } from "../http/pki.ts";
import { startDns } from "../fields/_dns.ts";
import { freePort } from "../fixtures/helpers.ts";
import { nodeH2 } from "./_h2.ts";

const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const ca = {
  provider: "inline",
  trusted_ca_certs: [pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "")],
};

/** `openssl s_server` for one connection, driven through its stdin. */
async function sServer() {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-reneg-" });
  await Deno.writeTextFile(`${dir}/cert.pem`, pki.leafs.up.cert);
  await Deno.writeTextFile(`${dir}/key.pem`, pki.leafs.up.key);
  const port = freePort();
  const child = new Deno.Command("openssl", {
    args: [
      "s_server",
      "-accept",
      `127.0.0.1:${port}`,
      "-tls1_2",
      "-cert",
      `${dir}/cert.pem`,
      "-key",
      `${dir}/key.pem`,
      "-crlf",
      "-msg",
      "-naccept",
      "1",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const c of s) out += dec.decode(c, { stream: true });
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const writer = child.stdin.getWriter();
  const until = async (pred: () => boolean, what: string) => {
    const end = Date.now() + 10_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`s_server: no ${what}:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await until(() => out.includes("ACCEPT"), "ACCEPT");
  return {
    dial: `127.0.0.1:${port}`,
    output: () => out,
    clientHellos: () => out.split("\n").filter((l) => /^<<< .*ClientHello/.test(l)).length,
    until,
    send: (text: string) => writer.write(new TextEncoder().encode(text)),
    async stop() {
      await writer.close().catch(() => {});
      try {
        child.kill();
      } catch { /* exited */ }
      await child.status;
      await drained;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A request through the proxy while s_server renegotiates `times` times; the status seen. */
async function renegotiating(renegotiation: string, times: number) {
  const up = await sServer();
  const srv = await startHttp({
    servers: {
      s: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{
            handler: "reverse_proxy",
            upstreams: [{ dial: up.dial }],
            transport: { protocol: "http", tls: { ca, server_name: "localhost", renegotiation } },
          }],
        }],
      },
    },
  });
  try {
    const answer = fetch(srv.url()).then(async (r) => ({ status: r.status, body: await r.text() }));
    await up.until(() => up.output().includes("GET / HTTP/1.1"), "request");
    let refused = false;
    for (let i = 0; i < times && !refused; i++) {
      await up.send("R\n");
      await up.until(
        () => up.clientHellos() >= i + 2 || /no renegotiation|ERROR/.test(up.output()),
        "renegotiation",
      );
      refused = /no renegotiation|ERROR/.test(up.output());
    }
    if (!refused) {
      await up.send("HTTP/1.1 200 OK\ncontent-length: 5\nconnection: close\n\nhello");
    }
    const r = await answer;
    return { ...r, hellos: up.clientHellos(), refused, output: up.output() };
  } finally {
    await srv.stop();
    await up.stop();
  }
}

Deno.test("renegotiation: never refuses, once allows one, freely allows each", async () => {
  const never = await renegotiating("never", 1);
  assert.equal(never.status, 502, never.output);
  assert.ok(never.refused, "the upstream saw the refusal");
  assert.equal(never.hellos, 1, "no second handshake");

  const once = await renegotiating("once", 1);
  assert.deepEqual([once.status, once.body], [200, "hello"], once.output);
  assert.equal(once.hellos, 2, "one renegotiation");

  const onceTwice = await renegotiating("once", 2);
  assert.equal(onceTwice.status, 502, onceTwice.output);
  assert.equal(onceTwice.hellos, 2, "the second renegotiation refused");
  assert.match(onceTwice.output, /no renegotiation/);

  const freely = await renegotiating("freely", 3);
  assert.deepEqual([freely.status, freely.body], [200, "hello"], freely.output);
  assert.equal(freely.hellos, 4, "three renegotiations");
});

Deno.test("the corpus's reverse_proxy_options transport runs against real upstreams", async () => {
  const corpus = new URL(
    "../../../../shared/caddyfile-corpus/corpus/reverse_proxy_options.caddyfiletest",
    import.meta.url,
  );
  let text: string;
  try {
    text = await Deno.readTextFile(corpus);
  } catch {
    // the transport as the corpus writes it (Caddy's adapter output), when ../shared is absent
    text = "";
  }
  const handler = text
    ? JSON.parse(text.split("----------")[1]).apps.http.servers.srv0.routes[0].handle[0]
      .routes[0].handle[0]
    : null;
  const transport = handler?.transport ?? {
    compression: false,
    dial_fallback_delay: 5000000000,
    dial_timeout: 3000000000,
    expect_continue_timeout: 9000000000,
    keep_alive: { max_idle_conns_per_host: 2, probe_interval: 30000000000 },
    max_conns_per_host: 5,
    max_response_header_size: 30000000,
    protocol: "http",
    read_buffer_size: 10000000,
    resolver: { addresses: ["8.8.8.8", "8.8.4.4"] },
    response_header_timeout: 8000000000,
    tls: { except_ports: ["8181", "8182"], renegotiation: "freely" },
    versions: ["h2c", "2"],
    write_buffer_size: 20000000,
  };
  assert.equal(transport.tls.renegotiation, "freely");
  const up = await nodeH2({ tls: pki.leafs.up });
  // a resolver on loopback instead of 8.8.8.8 / 8.8.4.4 (localhost itself is answered
  // locally, as Go's resolver reads /etc/hosts first)
  const dns = await startDns({ localhost: { a: ["127.0.0.1"] } });
  const srv = await startHttp({
    servers: {
      s: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{
            handler: "reverse_proxy",
            upstreams: [{ dial: `localhost:${up.port}` }],
            headers: handler?.headers,
            request_buffers: 4000,
            rewrite: handler?.rewrite ??
              { method: "GET", uri: "/rewritten?uri={http.request.uri}" },
            transport: {
              ...transport,
              resolver: { addresses: [`127.0.0.1:${dns.port}`] },
              tls: { ...transport.tls, ca },
            },
          }],
        }],
      },
    },
  });
  try {
    const r = await fetch(`${srv.url()}/path?x=1`, { method: "POST", body: "ignored" });
    assert.equal(r.status, 200);
    assert.match(await r.text(), /^session=\d+ stream=\d+ body=$/);
    const stream = up.of("stream").at(-1)!;
    // rewritten (a placeholder in the query is query-escaped, as Caddy does), over HTTP/2
    assert.equal(stream.path, "/rewritten?uri=%2Fpath%3Fx%3D1");
  } finally {
    await srv.stop();
    await up.stop();
    await dns.close();
  }
});

Deno.test("renegotiation: once and freely are refused by name where OpenSSL cannot be used", async () => {
  // a process without the FFI permission: Deno's TLS client alone, which never renegotiates
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-reneg-" });
  const script = `${dir}/parse.ts`;
  const module = new URL(
    "../../../lib/server/http/handlers/reverse_proxy/transport_config.ts",
    import.meta.url,
  ).href;
  await Deno.writeTextFile(
    script,
    `import { parseTransport } from ${JSON.stringify(module)};
for (const r of ["never", "once", "freely"]) {
  try {
    parseTransport({ protocol: "http", tls: { renegotiation: r } }, "transport");
    console.log(r, "accepted");
  } catch (e) {
    console.log(r, (e as Error).message);
  }
}`,
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-read", "--allow-env", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const lines = text.trim().split("\n");
    assert.equal(lines[0], "never accepted");
    for (const [i, r] of [[1, "once"], [2, "freely"]] as const) {
      assert.match(
        lines[i],
        new RegExp(
          `^${r} transport\\.tls\\.renegotiation: not supported by Gatehouse's upstream client ` +
            `\\("${r}": it needs OpenSSL through FFI: run with --allow-ffi \\(or -A\\)\\)$`,
        ),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
