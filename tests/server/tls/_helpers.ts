/**
 * Helpers of the TLS tests: a server on loopback with its own storage, HTTPS requests with
 * curl (which checks the chain against the local CA's root, never `-k`), and the certificate a
 * handshake for a given server name gets (openssl s_client).
 */
import { startServer } from "../../../lib/server/embed.ts";
import { generateKey, makeLeaf } from "../../../lib/server/pki/x509.ts";
import { freePort } from "../fixtures/helpers.ts";

export { freePort };

/** A running test server. */
export interface TlsServer {
  admin: string;
  storage: string;
  load(config: Record<string, unknown>): Promise<boolean>;
  rootPem(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a server whose storage is a fresh temp dir (kept across `load`). */
export async function tlsServer(
  config: Record<string, unknown>,
  storage?: string,
): Promise<TlsServer> {
  const root = storage ?? await Deno.makeTempDir({ prefix: "gatehouse-tls-" });
  const full = (c: Record<string, unknown>) => ({
    storage: { module: "file_system", root },
    logging: { logs: { default: { level: "ERROR" } } },
    ...c,
  });
  const s = await startServer({ adminAddress: "127.0.0.1:0", config: full(config) });
  return {
    admin: s.adminUrl!,
    storage: root,
    load: (c) => s.load(full(c)),
    async rootPem() {
      const r = await fetch(`${s.adminUrl}/pki/ca/local/certificates`, {
        headers: { origin: s.adminUrl! },
      });
      const chain = await r.text();
      return chain.slice(chain.lastIndexOf("-----BEGIN CERTIFICATE-----"));
    },
    async stop() {
      await s.stop();
      if (!storage) await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

const dec = new TextDecoder();

/** An HTTPS (or HTTP) request with curl; `ca` is the PEM file to trust (no -k ever). */
export async function curl(
  url: string,
  o: { ca?: string; resolve?: string; http1?: boolean; extra?: string[] } = {},
): Promise<{ code: number; status: number; body: string; headers: string; stderr: string }> {
  const args = ["-sS", "-D", "-", "--max-time", "10"];
  if (o.ca) args.push("--cacert", o.ca);
  if (o.resolve) args.push("--resolve", o.resolve);
  if (o.http1) args.push("--http1.1");
  args.push(...(o.extra ?? []), url);
  const out = await new Deno.Command("curl", { args, stdout: "piped", stderr: "piped" }).output();
  const text = dec.decode(out.stdout);
  const split = text.indexOf("\r\n\r\n");
  const headers = split < 0 ? text : text.slice(0, split);
  return {
    code: out.code,
    status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(headers)?.[1] ?? 0),
    body: split < 0 ? "" : text.slice(split + 4),
    headers,
    stderr: dec.decode(out.stderr),
  };
}

/** The leaf a handshake for `serverName` gets: its SAN names and serial; null on failure. */
export async function servedCert(
  port: number,
  serverName: string,
): Promise<{ names: string[]; serial: string } | null> {
  const s = new Deno.Command("openssl", {
    args: ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", serverName],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await s.stdin.close();
  const out = dec.decode((await s.output()).stdout);
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(out)?.[0];
  if (!pem) return null;
  const x = new Deno.Command("openssl", {
    args: ["x509", "-noout", "-serial", "-ext", "subjectAltName"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const w = x.stdin.getWriter();
  await w.write(new TextEncoder().encode(pem));
  await w.close();
  const info = dec.decode((await x.output()).stdout);
  return {
    serial: /serial=([0-9A-F]+)/.exec(info)?.[1] ?? "",
    names: [...info.matchAll(/(?:DNS|IP Address):([^\s,]+)/g)].map((m) => m[1]),
  };
}

/** Writes `text` to a temp file (removed by the caller's dir cleanup). */
export async function tempFile(dir: string, name: string, text: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/${name}`, text);
  return `${dir}/${name}`;
}

/** An http app with one server on `port`, a route per host answering `hi <host>`. */
export function sites(
  port: number,
  hosts: string[],
  extra: Record<string, unknown> = {},
  app: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    http: {
      ...app,
      servers: {
        srv0: {
          listen: [`127.0.0.1:${port}`],
          routes: hosts.map((h) => ({
            match: [{ host: [h] }],
            handle: [{ handler: "static_response", body: `hi ${h}` }],
          })),
          ...extra,
        },
      },
    },
  };
}

/** A leaf certificate for `names` signed by `ca`, with its key, as `load_pem` takes them. */
export async function leaf(
  ca: { pem: string },
  caKey: Awaited<ReturnType<typeof generateKey>>,
  names: string[],
): Promise<{ certificate: string; key: string }> {
  const k = await generateKey();
  return { certificate: (await makeLeaf(names, k.keys.publicKey, ca.pem, caKey)).pem, key: k.pem };
}
