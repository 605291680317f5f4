/**
 * The `deno` engine's HTTPS listener where SNI and live certificates are impossible (a Deno
 * without its internal certificate resolver, or without `--unstable-net`): `Deno.serve` with
 * the certificate for clients that send no server name, said in the log. Connection limits
 * (timeouts, head limit) need the per-connection server, so they do not apply here.
 *
 * @module
 */
import type { DenoTlsOptions, DenoTlsServer } from "./tls_server.ts";

/**
 * Without Deno's resolver or SO_REUSEPORT: `Deno.serve` with the certificate for no SNI.
 *
 * @example
 * ```ts ignore
 * const server = await serveOneCertificate({ hostname: "0.0.0.0", port: 443, getter, handler });
 * ```
 */
export async function serveOneCertificate(o: DenoTlsOptions): Promise<DenoTlsServer> {
  o.log?.(
    "SNI and live certificates need --unstable-net and Deno's certificate resolver: " +
      "serving one certificate on this listener",
    { port: o.port },
  );
  const one = await o.getter().getCertificate("");
  if (!one) throw new Error("no certificate for clients without SNI, and SNI is unavailable");
  const server = Deno.serve({
    hostname: o.hostname,
    port: o.port,
    cert: one.cert,
    key: one.key,
    onListen() {},
    ...(o.shared ? { reusePort: true } : {}),
  }, (req, info) =>
    o.handler(req, {
      remoteAddr: {
        transport: "tcp",
        hostname: info.remoteAddr.hostname,
        port: info.remoteAddr.port,
      },
      localAddress: o.localAddress(),
      completed: info.completed,
      tls: { proto: undefined },
    }));
  return {
    port: (server.addr as Deno.NetAddr).port,
    generations: 1,
    mode: "fixed",
    connections: 0,
    shutdown: () => server.shutdown(),
    finished: server.finished,
    certificatesChanged() {},
  };
}
