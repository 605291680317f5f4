/**
 * The http server JSON the assembler builds, and the listener question several of its steps
 * ask (does a server listen on a port other than this one).
 *
 * @module
 */
import type { Route } from "../../caddyfile/types.ts";
import { parseNetAddr } from "../../caddyfile/netaddr.ts";

/** An http server's JSON, as the adapter builds it. */
export type ServerJSON = Record<string, unknown> & {
  listen?: string[];
  routes?: Route[];
  errors?: { routes?: Route[] };
  automatic_https?: Record<string, unknown> & { skip?: string[]; disable?: boolean };
  logs?: Record<string, unknown> & {
    logger_names?: Record<string, string[]>;
    skip_hosts?: string[];
  };
  tls_connection_policies?: Record<string, unknown>[];
};

/** True when some listener's port range does not contain `port`. */
export function listenersUseAnyPortOtherThan(addresses: string[], port: string): boolean {
  const p = Number(port);
  if (!/^\d+$/.test(port)) return false;
  for (const a of addresses) {
    let na;
    try {
      na = parseNetAddr(a);
    } catch {
      continue;
    }
    if (p > na.endPort || p < na.startPort) return true;
  }
  return false;
}
