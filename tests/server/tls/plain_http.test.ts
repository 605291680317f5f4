/**
 * Plain HTTP sent to an HTTPS port, against real processes with Caddy 2.6.2 as the oracle: on
 * both listener engines Gatehouse answers what Caddy (Go's net/http) answers, byte for byte
 * (`HTTP/1.0 400 Bad Request`, `Client sent an HTTP request to an HTTPS server.`), to the
 * requests Go tells for plain HTTP (`GET /`, `HEAD `, `POST `, `PUT /`, `OPTIO`), curl shows
 * that answer for an `http://` URL, other bytes get no HTTP answer, and TLS clients (HTTP/1.1
 * and HTTP/2) are served as before.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { looksLikeHttp, PLAIN_HTTP_ANSWER } from "../../../lib/server/listeners/plain_http.ts";
import { addressBytes } from "../../../lib/server/listeners/deno/plain_http_peek.ts";

function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const HAVE_CADDY = caddyInstalled();

/** Sends `data` on a plain TCP connection and returns all it gets until the server closes. */
async function raw(port: number, data: string): Promise<string> {
  // `localhost:<port>` listens on `:<port>`: IPv4, or IPv6 alone on some engines
  const conn = await Deno.connect({ hostname: "127.0.0.1", port })
    .catch(() => Deno.connect({ hostname: "::1", port }));
  try {
    await conn.write(new TextEncoder().encode(data));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(4096);
    const timer = setTimeout(() => conn.close(), 5000); // a server that never closes: stop
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        chunks.push(buf.slice(0, n));
      }
    } catch { /* reset or closed by the timer */ }
    clearTimeout(timer);
    return new TextDecoder("latin1").decode(
      new Uint8Array(chunks.flatMap((c) => [...c])),
    );
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

async function curl(args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", { args, stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(out.stdout);
}

/** A site on `localhost:<port>` over HTTPS from the local CA, as a Caddyfile. */
function caddyfile(port: number, admin: number, httpPort: number): string {
  return `{\n\tadmin 127.0.0.1:${admin}\n\thttp_port ${httpPort}\n\tskip_install_trust\n}\n` +
    `localhost:${port} {\n\trespond "hi"\n}\n`;
}

interface Server {
  port: number;
  stop(): Promise<void>;
}

/** `caddy run` of the site; resolves once it answers over TLS. */
async function startCaddy(dir: string, env: Record<string, string>): Promise<Server> {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/Caddyfile`, caddyfile(port, freePort(), freePort()));
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", "Caddyfile", "--adapter", "caddyfile"],
    cwd: dir,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await until(
    async () => await curl(["-sk", `https://localhost:${port}/`]) === "hi",
    30000,
    "caddy",
  );
  return {
    port,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** `gatehouse run` of the same site on `engine`; resolves once it answers over TLS. */
async function startGatehouse(
  dir: string,
  env: Record<string, string>,
  engine: "deno" | "node",
  workers = 1,
): Promise<Server> {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/site.caddyfile`, caddyfile(port, freePort(), freePort()));
  const adapted = spawnCli(["adapt", "--config", "site.caddyfile"], env, dir);
  assert.equal((await adapted.status).code, 0, adapted.output());
  const config = JSON.parse(adapted.stdout());
  for (const srv of Object.values(config.apps.http.servers) as Record<string, unknown>[]) {
    srv.listener_engine = engine;
  }
  await Deno.writeTextFile(`${dir}/site.json`, JSON.stringify(config));
  const p = spawnCli(["run", "--config", "site.json", "--workers", String(workers)], env, dir);
  try {
    await until(
      async () => await curl(["-sk", `https://localhost:${port}/`]) === "hi",
      60000,
      `gatehouse (${engine} engine): ${p.output()}`,
    );
  } catch (e) {
    p.child.kill("SIGTERM");
    await p.status;
    throw e;
  }
  return {
    port,
    async stop() {
      p.child.kill("SIGTERM");
      await p.status;
    },
  };
}

const PLAIN = [
  "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
  "HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n",
  "POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\na=1",
  "PUT /x HTTP/1.0\r\n\r\n",
  "OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n",
];
const NOT_PLAIN = ["DELETE /x HTTP/1.1\r\nHost: localhost\r\n\r\n", "HELLO\r\n\r\n"];

Deno.test("looksLikeHttp: Go's five starts, from the first five bytes only", () => {
  for (const s of PLAIN) assert.ok(looksLikeHttp(new TextEncoder().encode(s)), s);
  for (const s of [...NOT_PLAIN, "GET", "get / HTTP/1.1", "PUT x", "\x16\x03\x01\x02\x00"]) {
    assert.ok(!looksLikeHttp(new TextEncoder().encode(s)), s);
  }
  assert.equal(
    new TextDecoder().decode(PLAIN_HTTP_ANSWER),
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
  );
});

Deno.test("addressBytes: the addresses Deno writes, IPv4 and IPv6", () => {
  assert.deepEqual([...addressBytes("127.0.0.1")!], [127, 0, 0, 1]);
  assert.deepEqual([...addressBytes("::1")!], [...Array(15).fill(0), 1]);
  assert.deepEqual(
    [...addressBytes("2001:db8::ff00:42:8329")!],
    [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29],
  );
  assert.deepEqual(
    [...addressBytes("::ffff:10.0.0.1")!],
    [...Array(10).fill(0), 0xff, 0xff, 10, 0, 0, 1],
  );
  assert.equal(addressBytes("localhost"), null);
  assert.equal(addressBytes("1::2::3"), null);
});

for (const [engine, workers] of [["deno", 1], ["deno", 2], ["node", 1]] as const) {
  Deno.test({
    name: `plain HTTP to an HTTPS port (${engine} engine${
      workers > 1 ? `, ${workers} worker processes` : ""
    }): Caddy's 400, byte for byte`,
    ignore: !HAVE_CADDY,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const t = await tempEnv();
      const caddy = await startCaddy(t.dir, t.env);
      let ours: Server | undefined;
      try {
        ours = await startGatehouse(t.dir, t.env, engine, workers);
        for (const request of PLAIN) {
          const want = await raw(caddy.port, request);
          assert.equal(want, new TextDecoder().decode(PLAIN_HTTP_ANSWER), `Caddy: ${request}`);
          assert.equal(await raw(ours.port, request), want, request);
        }
        for (const request of NOT_PLAIN) {
          assert.ok(!(await raw(caddy.port, request)).startsWith("HTTP/"), `Caddy: ${request}`);
          assert.ok(!(await raw(ours.port, request)).startsWith("HTTP/"), request);
        }
        // a TLS record that is no ClientHello, sent in pieces, fails its handshake alone
        const bogus = await Deno.connect({ hostname: "127.0.0.1", port: ours.port })
          .catch(() => Deno.connect({ hostname: "::1", port: ours!.port }));
        for (const part of ["\x16\x03\x01\x00\x08", "garbage", "!", "more garbage"]) {
          await bogus.write(new TextEncoder().encode(part)).catch(() => {});
        }
        await bogus.read(new Uint8Array(64)).catch(() => null);
        bogus.close();
        // curl with an http:// URL shows the answer, as it does from Caddy
        const fromCurl = (port: number) =>
          curl(["-s", "-w", " %{http_code}", `http://localhost:${port}/`]);
        assert.equal(await fromCurl(ours.port), await fromCurl(caddy.port));
        assert.equal(
          await fromCurl(ours.port),
          "Client sent an HTTP request to an HTTPS server.\n 400",
        );
        // TLS clients are served as before, HTTP/1.1 and HTTP/2
        assert.equal(await curl(["-sk", "--http1.1", `https://localhost:${ours.port}/`]), "hi");
        assert.equal(
          await curl([
            "-sk",
            "--http2",
            "-w",
            " %{http_version}",
            `https://localhost:${ours.port}/`,
          ]),
          "hi 2",
        );
      } finally {
        await ours?.stop();
        await caddy.stop();
        await Deno.remove(t.dir, { recursive: true });
      }
    },
  });
}
