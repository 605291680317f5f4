/**
 * Talking to a running server's admin endpoint from the command line (`stop`, `reload`):
 * the address comes from `--address`, else the config's `admin.listen`, else
 * `GATEHOUSE_ADMIN`, else `localhost:2019`.
 *
 * @module
 */
import { DEFAULT_ADMIN_ADDRESS } from "../server/engine.ts";
import { joinHostPort, parseNetworkAddress } from "../server/net/address.ts";
import { UsageError } from "./usage_error.ts";

/** The default admin address: `GATEHOUSE_ADMIN` or `localhost:2019`. */
export function defaultAdminAddress(): string {
  return Deno.env.get("GATEHOUSE_ADMIN") || DEFAULT_ADMIN_ADDRESS;
}

/** Picks the admin address from a flag, a config, or the default. */
export function adminAddressFrom(flag: string | undefined, config: unknown): string {
  if (flag) return flag;
  const admin = (config as { admin?: { listen?: string; disabled?: boolean } } | null)?.admin;
  if (admin?.disabled) throw new UsageError("the admin endpoint is disabled in the config");
  return admin?.listen || defaultAdminAddress();
}

/**
 * Why a request to the admin endpoint failed, in words: fetch says only "fetch failed" and keeps
 * the reason in its `cause` ("... tcp connect error: Connection refused (os error 111)").
 * Nothing listening is `connection refused at <address>` with what to do.
 */
export function fetchFailure(e: unknown, address?: string): string {
  const chain: string[] = [];
  for (let c: unknown = e; c instanceof Error && chain.length < 5; c = c.cause) {
    chain.push(c.message);
  }
  const text = chain.join(": ");
  const at = address ?? text.match(/for url \(https?:\/\/([^/)]+)/)?.[1];
  if (/connection refused|ECONNREFUSED/i.test(text)) {
    return `connection refused at ${at ?? "the admin address"} (is the server running? ` +
      "start it with `gatehouse run` or `gatehouse start`, or name its admin address with " +
      "--address)";
  }
  if (/no such file or directory|ENOENT/i.test(text)) {
    return `no socket at ${at ?? "the admin address"} (is the server running?)`;
  }
  // the innermost reason, without fetch's own wrapping
  const inner = chain.at(-1) ?? String(e);
  return inner.replace(/^error sending request for url \([^)]*\): /, "");
}

/** Sends one request to the admin endpoint; throws UsageError when it cannot connect or answers an error. */
export async function adminRequest(
  address: string,
  method: string,
  path: string,
  init: { body?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const addr = parseNetworkAddress(address);
  const unix = addr.network.startsWith("unix");
  const host = unix ? "127.0.0.1" : joinHostPort(addr.host || "localhost", addr.startPort);
  let client: Deno.HttpClient | undefined;
  if (unix) client = Deno.createHttpClient({ proxy: { transport: "unix", path: addr.host } });
  // As Caddy's command line: the Origin names the admin address as configured (so that
  // `enforce_origin` endpoints accept it); none over a unix socket, which has no origin.
  const headers: Record<string, string> = unix
    ? {}
    : { origin: `http://${joinHostPort(addr.host, addr.startPort)}` };
  try {
    const res = await fetch(`http://${host}${path}`, {
      method,
      body: init.body,
      headers: { ...headers, ...init.headers },
      client,
    });
    if (res.status >= 400) {
      const text = await res.text();
      let msg = text;
      try {
        msg = JSON.parse(text).error ?? text;
      } catch { /* plain text */ }
      throw new UsageError(`admin endpoint ${address} answered ${res.status}: ${msg.trim()}`);
    }
    return res;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const why = fetchFailure(e, unix ? addr.host : host);
    // nobody there says it all; anything else is told as a failed request
    throw new UsageError(
      /^(connection refused|no socket) at /.test(why)
        ? why
        : `performing request to admin endpoint ${address}: ${why}`,
    );
  } finally {
    client?.close();
  }
}
