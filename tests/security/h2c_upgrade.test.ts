/**
 * `Upgrade: h2c` never reaches an upstream (RFC 9113 section 3.1 deprecates the upgrade). On
 * the node engine, which relays any protocol switch, `GET /public` with `Upgrade: h2c` got the
 * upstream's `101`, and HTTP/2 requests sent through that tunnel (`/secret/admin`, refused by
 * the front's routes) reached the upstream. Through a real `gatehouse run` process on both
 * engines, in front of a node process that takes h2c upgrades (`_h2c_upstream.mjs`): the
 * upstream sees a plain request without `Upgrade` or `HTTP2-Settings`, the client gets a
 * plain answer, and no request the routes refuse reaches the upstream. Neither listener
 * engine takes an h2c upgrade itself (Deno.serve and node:http answer HTTP/1.1).
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { nodeAvailable } from "../server/parity2/_h2_client.ts";

const ENGINES = ["deno", "node"] as const;
const FIXTURE = new URL("./_h2c_upstream.mjs", import.meta.url).pathname;

interface Seen {
  via: "h1" | "upgrade" | "h2";
  path: string;
  headers: [string, string][];
}

/** The upstream process and the requests it reported. */
async function h2cUpstream() {
  const child = new Deno.Command("node", {
    args: [FIXTURE],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const seen: Seen[] = [];
  let port = 0;
  let changed = () => {};
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const o = JSON.parse(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (o.port) port = o.port;
        else seen.push(o);
        changed();
      }
    }
  })();
  const until = async (pred: () => boolean, what: string) => {
    const watchdog = Date.now() + 15_000;
    while (!pred()) {
      if (Date.now() > watchdog) throw new Error(`upstream: no ${what}`);
      await new Promise<void>((r) => {
        changed = r;
        setTimeout(r, 1000);
      });
    }
  };
  await until(() => port !== 0, "port");
  return {
    dial: () => `127.0.0.1:${port}`,
    seen,
    until,
    async close() {
      await child.stdin.close();
      await child.status;
      await reading;
    },
  };
}

const enc = new TextEncoder();
const PREFACE = enc.encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** An HTTP/2 frame (9-byte header, then the payload). */
function frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(9 + payload.length);
  f[0] = payload.length >> 16;
  f[1] = (payload.length >> 8) & 0xff;
  f[2] = payload.length & 0xff;
  f[3] = type;
  f[4] = flags;
  new DataView(f.buffer).setUint32(5, stream);
  f.set(payload, 9);
  return f;
}

/** `GET <path>` on stream 3: HPACK `:method GET`, `:scheme http` (static), then literals. */
function getRequest(path: string): Uint8Array {
  const block = [0x82, 0x86, 0x04, path.length, ...enc.encode(path), 0x01, 1, 0x61];
  return frame(1, 0x5, 3, new Uint8Array(block));
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/**
 * Sends an upgrade request (for `/public`), then (whatever the answer) the HTTP/2 preface
 * and a request for `/secret/admin`. Reads the answer to the first request, then, after a
 * 101, until the tunnel answers stream 3 (the upstream reported it first), else until the
 * connection closes.
 */
async function upgradeAttempt(
  port: number,
  fields: string,
  path = "/public",
): Promise<{ head: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const watchdog = setTimeout(() => conn.close(), 20_000);
  let buf: Uint8Array = new Uint8Array(0);
  const more = async () => {
    const b = new Uint8Array(65536);
    const n = await conn.read(b).catch(() => null);
    if (n === null) return false;
    buf = concat([buf, b.subarray(0, n)]);
    return true;
  };
  try {
    await conn.write(enc.encode(`GET ${path} HTTP/1.1\r\nHost: a\r\n${fields}\r\n`));
    let end = -1;
    while ((end = new TextDecoder().decode(buf).indexOf("\r\n\r\n")) < 0) {
      if (!(await more())) break;
    }
    const head = new TextDecoder().decode(buf.subarray(0, Math.max(end, 0)));
    buf = buf.subarray(end + 4);
    if (/^HTTP\/1\.1 101 /.test(head)) {
      await conn.write(
        concat([PREFACE, frame(4, 0, 0, new Uint8Array(0)), getRequest("/secret/admin")]),
      );
      // frames until HEADERS on stream 3
      while (true) {
        let off = 0;
        let answered = false;
        while (buf.length - off >= 9) {
          const len = (buf[off] << 16) | (buf[off + 1] << 8) | buf[off + 2];
          if (buf.length - off < 9 + len) break;
          const stream = new DataView(buf.buffer, buf.byteOffset + off + 5, 4).getUint32(0) &
            0x7fffffff;
          if (buf[off + 3] === 1 && stream === 3) answered = true;
          off += 9 + len;
        }
        if (answered || !(await more())) break;
      }
    } else {
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      while (buf.length < length) if (!(await more())) break;
      await conn.write(
        concat([PREFACE, frame(4, 0, 0, new Uint8Array(0)), getRequest("/secret/admin")]),
      );
      while (await more()) { /* the server answers the stray bytes as HTTP/1.1, or closes */ }
    }
    return { head };
  } finally {
    clearTimeout(watchdog);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `reverse_proxy (${engine} engine): Upgrade: h2c is not relayed, no tunnel opens past the routes`,
    ignore: !nodeAvailable(),
    async fn() {
      const up = await h2cUpstream();
      const g = await startGatehouse({
        site: {
          listener_engine: engine,
          routes: [
            {
              match: [{ path: ["/secret/*"] }],
              handle: [{ handler: "static_response", status_code: 403, body: "refused" }],
              terminal: true,
            },
            { handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial() }] }] },
          ],
        },
        // cleartext HTTP/2 on: still prior knowledge only, never an upgrade
        plain: {
          listener_engine: engine,
          protocols: ["h1", "h2c"],
          routes: [{ handle: [{ handler: "static_response", body: "plain" }] }],
        },
      });
      try {
        const refused = await fetch(`http://127.0.0.1:${g.ports.site}/secret/admin`);
        assert.equal(refused.status, 403);
        await refused.body?.cancel();
        for (
          const fields of [
            // as RFC 7540 section 3.2 asks
            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
            // HTTP2-Settings left out of Connection, the protocol name in capitals
            "Connection: Upgrade\r\nUpgrade: H2C\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
          ]
        ) {
          const { head } = await upgradeAttempt(g.ports.site, fields);
          // a request through the proxy afterwards: every earlier report has been read
          const r = await fetch(`http://127.0.0.1:${g.ports.site}/sentinel`);
          assert.equal(await r.text(), "ok /sentinel");
          await up.until(() => up.seen.some((s) => s.path === "/sentinel"), "sentinel");
          const seen = [...up.seen];
          assert.deepEqual(
            seen.map((s) => `${s.via} ${s.path}`),
            ["h1 /public", "h1 /sentinel"],
            "no upgrade reached the upstream and nothing came through a tunnel",
          );
          assert.match(head, /^HTTP\/1\.1 200 /, `a plain answer, not a switch: ${head}`);
          const names = seen[0].headers.map(([k]) => k);
          assert.ok(!names.includes("upgrade"), names.join(", "));
          assert.ok(!names.includes("http2-settings"), names.join(", "));
          up.seen.length = 0;
        }
        if (engine === "node") {
          // a switch to a protocol the request did not name is refused (as Go's proxy)
          const { head } = await upgradeAttempt(
            g.ports.site,
            "Connection: Upgrade\r\nUpgrade: websocket\r\n",
            "/switch-anyway",
          );
          const r = await fetch(`http://127.0.0.1:${g.ports.site}/sentinel`);
          assert.equal(await r.text(), "ok /sentinel");
          await up.until(() => up.seen.some((s) => s.path === "/sentinel"), "sentinel");
          assert.deepEqual(up.seen.map((s) => `${s.via} ${s.path}`), [
            "upgrade /switch-anyway",
            "h1 /sentinel",
          ]);
          assert.match(head, /^HTTP\/1\.1 502 /, head);
        }
        // the listener itself answers an h2c upgrade request as HTTP/1.1, h2c enabled or not
        const { head } = await upgradeAttempt(
          g.ports.plain,
          "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n",
        );
        assert.match(head, /^HTTP\/1\.1 200 /, head);
      } finally {
        await g.stop();
        await up.close();
      }
    },
  });
}
