/**
 * HTTP/3 test kit: an HTTP/3 listener on a loopback UDP port with a certificate from a test
 * CA, the client connection of `lib/server/listeners/h3/client.ts`, and raw QUIC connections
 * for writing frames a well-behaved client never sends.
 */
import type { CertifiedKey, ConnHandler } from "../../../../lib/server/module/listener.ts";
import { H3ClientConnection } from "../../../../lib/server/listeners/h3/client.ts";
import { encodeSettings, STREAM_TYPE } from "../../../../lib/server/listeners/h3/frames.ts";
import { type H3Server, serveH3 } from "../../../../lib/server/listeners/h3/listener.ts";
import { makePki, type Pki } from "../../http/pki.ts";
import { freePort } from "../../fixtures/helpers.ts";

let pki: Pki | undefined;

/** One CA with leaves for localhost (and 127.0.0.1), a.test and b.test. */
export async function testPki(): Promise<Pki> {
  pki ??= await makePki({
    localhost: { dns: ["localhost"], ip: ["127.0.0.1"] },
    a: { dns: ["a.test", "*.a.test"] },
    b: { dns: ["b.test"] },
  });
  return pki;
}

export interface RunningH3 {
  server: H3Server;
  port: number;
  ca: string;
  logs: { msg: string; fields?: Record<string, unknown> }[];
  /** Makes `getCertificate` answer `name` with `key` (null removes it), then tells the server. */
  setCertificate(name: string, key: CertifiedKey | null): void;
  close(): Promise<void>;
}

/** An HTTP/3 listener answering with `handler`, certificates by name from `certs`. */
export async function startH3(
  handler: ConnHandler,
  o: { certs?: Record<string, CertifiedKey>; names?: string[]; maxHeaderBytes?: number } = {},
): Promise<RunningH3> {
  const p = await testPki();
  const certs = new Map(
    Object.entries(o.certs ?? { localhost: p.leafs.localhost, "": p.leafs.localhost }),
  );
  const logs: RunningH3["logs"] = [];
  const getter = {
    getCertificate: (name: string) => Promise.resolve(certs.get(name) ?? null),
    subscribe: () => () => {},
  };
  const server = serveH3({
    hostname: "127.0.0.1",
    port: 0,
    getter: () => getter,
    names: () => o.names ?? ["localhost"],
    handler,
    localAddress: () => `127.0.0.1:${server.port}`,
    maxHeaderBytes: () => o.maxHeaderBytes ?? 1 << 20,
    log: (msg, fields) => {
      logs.push({ msg, fields });
      if (Deno.env.get("H3_DEBUG")) console.error("H3LOG", msg, JSON.stringify(fields));
    },
  });
  await server.ready;
  return {
    server,
    port: server.port,
    ca: p.caPem,
    logs,
    setCertificate(name, key) {
      if (key) certs.set(name, key);
      else certs.delete(name);
      server.certificatesChanged();
    },
    async close() {
      await server.shutdown();
      await server.finished;
    },
  };
}

/** A client connection to the listener. */
export function connect(h: RunningH3, serverName = "localhost"): Promise<H3ClientConnection> {
  return H3ClientConnection.connect({
    hostname: "127.0.0.1",
    port: h.port,
    serverName,
    caCerts: [h.ca],
  });
}

/** The whole body of an answer. */
export async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(body).text();
}

/** A raw QUIC connection speaking h3, for frames a client must not send. */
export async function raw(h: RunningH3): Promise<Deno.QuicConn> {
  return await Deno.connectQuic({
    hostname: "127.0.0.1",
    port: h.port,
    serverName: "localhost",
    caCerts: [h.ca],
    alpnProtocols: ["h3"],
  });
}

/** Writers of streams left open, held until their connection closes (a collected one ends). */
const open = new Map<Deno.QuicConn, WritableStreamDefaultWriter<Uint8Array>[]>();

/** Opens a unidirectional stream and writes `bytes` on it (left open unless `close`). */
export async function uni(conn: Deno.QuicConn, bytes: Uint8Array, close = false): Promise<void> {
  const s = await conn.createUnidirectionalStream();
  const w = s.getWriter();
  await w.write(bytes);
  if (close) return await w.close();
  if (!open.has(conn)) {
    open.set(conn, []);
    conn.closed.catch(() => {}).finally(() => open.delete(conn));
  }
  open.get(conn)!.push(w);
}

/** A control stream with an empty SETTINGS, then `more`. */
export function controlStream(more: Uint8Array = new Uint8Array(0)): Uint8Array {
  return concat(Uint8Array.of(STREAM_TYPE.CONTROL), encodeSettings([]), more);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

/** The close code of a connection the server closes (waits for it). */
export async function closeCode(conn: Deno.QuicConn): Promise<number> {
  const info = await conn.closed.catch((e) => ({ closeCode: -1, reason: String(e) }));
  return info.closeCode;
}

/** Every byte the server sent on its unidirectional stream of `type`, as far as it came. */
export async function serverStream(
  conn: Deno.QuicConn,
  type: number,
  until: (bytes: Uint8Array) => boolean,
): Promise<Uint8Array> {
  // read, never cancelled: a cancelled stream of streams leaves its pending accept unhandled
  const streams = conn.incomingUnidirectionalStreams.getReader();
  for (;;) {
    const next = await streams.read();
    if (next.done) throw new Error("the connection closed");
    const reader = next.value.getReader();
    const first = await reader.read();
    if (first.done || first.value[0] !== type) {
      reader.cancel().catch(() => {});
      continue;
    }
    let got: Uint8Array = first.value.subarray(1);
    while (!until(got)) {
      const { done, value } = await reader.read();
      if (done) break;
      got = concat(got, value);
    }
    streams.releaseLock();
    return got;
  }
}

/** A port free for both TCP and UDP on 127.0.0.1 (HTTPS and HTTP/3 share the number). */
export function freeTcpUdpPort(): number {
  for (let i = 0; i < 100; i++) {
    const port = freePort();
    try {
      Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port }).close();
      return port;
    } catch { /* UDP taken: another */ }
  }
  throw new Error("no port free for both TCP and UDP");
}

/** True when UDP `port` on 127.0.0.1 is bound by someone. */
export function udpBound(port: number): boolean {
  try {
    Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port }).close();
    return false;
  } catch {
    return true;
  }
}

/** The base64 SHA-256 of a certificate's public key (Chromium's --ignore-certificate-errors-spki-list). */
export async function spkiHash(certPem: string): Promise<string> {
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      "openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const w = out.stdin.getWriter();
  await w.write(new TextEncoder().encode(certPem));
  await w.close();
  return new TextDecoder().decode((await out.output()).stdout).trim();
}

/** What gtlsclient (ngtcp2 + nghttp3) got: the answer's fields and its body. */
export interface GtlsAnswer {
  code: number;
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  output: string;
}

/**
 * Fetches `path` with Debian's gtlsclient (`--exit-on-all-streams-close`), the body saved with
 * `--download` and read back.
 */
export async function gtlsclient(
  port: number,
  path: string,
  o: { method?: string; data?: string } = {},
): Promise<GtlsAnswer> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-gtls-" });
  try {
    const args = [
      "--exit-on-all-streams-close",
      "--no-quic-dump",
      "--no-http-dump",
      "--download",
      dir,
      "--timeout",
      "10s",
    ];
    if (o.method) args.push("-m", o.method);
    if (o.data) args.push("-d", o.data);
    args.push("127.0.0.1", String(port), `https://localhost:${port}${path}`);
    const out = await new Deno.Command("gtlsclient", { args, stdout: "piped", stderr: "piped" })
      .output();
    const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    const headers: [string, string][] = [];
    let status = 0;
    for (const m of output.matchAll(/^http: stream 0x0 \[([^:\]]+|:status): (.*)\]$/gm)) {
      if (m[1] === ":status") status = Number(m[2]);
      else headers.push([m[1], m[2]]);
    }
    let body = new Uint8Array(0);
    for (const e of Deno.readDirSync(dir)) body = Deno.readFileSync(`${dir}/${e.name}`);
    return { code: out.code, status, headers, body, output };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
