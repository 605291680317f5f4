/**
 * The Go tests' own servers (upstreams, auth services, backends that record what they got),
 * as peers a scenario starts before its first step: HTTP/1.1 servers on `Deno.serve` (TCP or a
 * unix socket), a listener that closes every connection, and, where the Go test needs Go's
 * HTTP/2 server, the Node servers of peers.mjs.
 */
import { makePki } from "../../http/pki.ts";

/** What a peer saw of one request. */
export interface Seen {
  method: string;
  path: string;
  headers: Headers;
  /** Per-connection source address given by a PROXY header (peers.mjs proxyproto). */
  source?: string;
  httpVersion?: string;
}

/** A running peer. */
export interface Peer {
  /** `127.0.0.1:<port>`, or the socket's path. */
  addr: string;
  /** The requests it got, in order. */
  seen: Seen[];
  /** Connections that opened with a PROXY header: their source addresses (proxyproto). */
  sources: string[];
  close(): Promise<void>;
}

/** How the runner lends a peer its port: `port(p)` is the free port standing for Caddy's `p`. */
export interface PeerEnv {
  port(p: number): number;
  tmp: string;
}

/** Starts a peer. */
export type PeerSpec = (env: PeerEnv) => Promise<Peer>;

type Handler = (req: Request) => Response | Promise<Response>;

/**
 * An HTTP/1.1 server answering with `handler`: on 127.0.0.1 at the free port for Caddy's `port`
 * (a Go test's fixed `127.0.0.1:2020`), at a random one (`127.0.0.1:0`, `httptest.NewServer`),
 * or on a unix socket in a temp directory (`unix: true`).
 */
export function http(handler: Handler, o: { port?: number; unix?: boolean } = {}): PeerSpec {
  return (env) => {
    const seen: Seen[] = [];
    const path = `${env.tmp}/${crypto.randomUUID()}.sock`;
    const serve = (req: Request) => {
      const u = new URL(req.url);
      seen.push({ method: req.method, path: u.pathname + u.search, headers: req.headers });
      return handler(req);
    };
    const onListen = () => {};
    const server = o.unix
      ? Deno.serve({ path, onListen }, serve)
      : Deno.serve({ hostname: "127.0.0.1", port: o.port ? env.port(o.port) : 0, onListen }, serve);
    return Promise.resolve({
      addr: o.unix ? path : `127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
      seen,
      sources: [],
      close: () => server.shutdown(),
    });
  };
}

/** A server that answers `body` with status 200 (`w.Write([]byte(body))`). */
export const hello = (body: string, o: { port?: number; unix?: boolean } = {}): PeerSpec =>
  http(() => new Response(body), o);

/** A listener that accepts connections and closes them at once. */
export function closer(): PeerSpec {
  return () => {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    (async () => {
      for await (const c of l) c.close();
    })().catch(() => {});
    return Promise.resolve({
      addr: `127.0.0.1:${(l.addr as Deno.NetAddr).port}`,
      seen: [],
      sources: [],
      close: () => Promise.resolve(l.close()),
    });
  };
}

const PEERS = new URL("./peers.mjs", import.meta.url).pathname;

/** Runs peers.mjs in `node` with `args`; resolves once it listens. */
function node(args: string[], cleanup?: () => Promise<void>): Promise<Peer> {
  const child = new Deno.Command("node", {
    args: [PEERS, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const seen: Seen[] = [];
  const sources: string[] = [];
  let source: string | undefined;
  return new Promise((resolve, reject) => {
    const reading = (async () => {
      let rest = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        rest += chunk;
        for (let nl; (nl = rest.indexOf("\n")) >= 0;) {
          const line = JSON.parse(rest.slice(0, nl));
          rest = rest.slice(nl + 1);
          if (line.port) {
            resolve({
              addr: `127.0.0.1:${line.port}`,
              seen,
              sources,
              async close() {
                await child.stdin.close().catch(() => {});
                await child.status;
                await reading;
                await cleanup?.();
              },
            });
          } else if (line.connection) {
            sources.push(source = line.connection);
          } else if (line.request || line.path) {
            seen.push({
              method: line.method,
              path: line.request ?? line.path,
              headers: new Headers(line.authority ? { host: line.authority } : {}),
              source,
              httpVersion: line.httpVersion,
            });
          }
        }
      }
      reject(new Error(`peers.mjs ${args.join(" ")} stopped before listening`));
    })();
  });
}

/**
 * go-proxyproto with the REQUIRE policy in front of an HTTP/1.1 and h2c server
 * (proxyprotocol_test.go `newProxyProtoBackend`), or of a TLS server speaking h2 and
 * HTTP/1.1 with a certificate of its own (`newTLSProxyProtoBackend`).
 */
export function proxyProtoBackend(o: { tls?: boolean } = {}): PeerSpec {
  return async (env) => {
    if (!o.tls) return await node(["proxyproto"]);
    const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
    const dir = await Deno.makeTempDir({ dir: env.tmp });
    await Deno.writeTextFile(`${dir}/cert.pem`, pki.leafs.up.cert);
    await Deno.writeTextFile(`${dir}/key.pem`, pki.leafs.up.key);
    return await node(["proxyproto-tls", `${dir}/cert.pem`, `${dir}/key.pem`]);
  };
}

/** stream_test.go's h2c server at Caddy's `port`, wanting the Host `host` (see peers.mjs). */
export function h2cEcho(port: number, host: (env: PeerEnv) => string): PeerSpec {
  return (env) => node(["h2c-echo", String(env.port(port)), host(env)]);
}
