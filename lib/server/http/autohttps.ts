/**
 * Automatic HTTPS (Caddy's `autohttps.go`, phase 1), applied to a copy of `apps.http.servers`
 * before the servers are built, so `GET /config` still shows what was loaded.
 *
 * For each server not listening only on `http_port` and without `automatic_https.disable`:
 * - the names of its routes' `host` matchers (minus `skip`) are its domains;
 * - a server listening only on `https_port` gets TLS; a server with domains gets TLS too;
 * - each domain that qualifies for a certificate (minus `skip_certificates`, and unless
 *   `disable_certificates`) is managed by the `tls` app, except when a loaded certificate
 *   already covers it (unless `ignore_loaded_certificates`);
 * - unless `disable_redirects`, plain HTTP requests on `http_port` of the same interfaces are
 *   redirected (308) to HTTPS: routes added to a server already listening there, else a server
 *   named `remaining_auto_https_redirects`; exact names before wildcards (current Caddy's
 *   order, see `bySpecificity`).
 *
 * @module
 */
import type { Logger } from "../module/instance.ts";
import type { TlsApp } from "../tls/app.ts";
import { qualifiesForCertificate } from "../tls/automation.ts";
import { routeHostNames } from "../tls/policies.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import { expandListenAddress } from "./listen_address.ts";

/** A server's `automatic_https` (Caddy's `AutoHTTPSConfig`). */
export interface AutoHttpsConfig {
  disable: boolean;
  disable_redirects: boolean;
  disable_certificates: boolean;
  skip: string[];
  skip_certificates: string[];
  ignore_loaded_certificates: boolean;
}

const FIELDS: readonly (keyof AutoHttpsConfig)[] = [
  "disable",
  "disable_redirects",
  "disable_certificates",
  "skip",
  "skip_certificates",
  "ignore_loaded_certificates",
];

/** Decodes `automatic_https`; throws on unknown fields and wrong types. */
export function decodeAutoHttps(raw: unknown, where: string): AutoHttpsConfig {
  const out: AutoHttpsConfig = {
    disable: false,
    disable_redirects: false,
    disable_certificates: false,
    skip: [],
    skip_certificates: [],
    ignore_loaded_certificates: false,
  };
  if (raw === undefined || raw === null) return out;
  const d = Decoder.of(raw, where);
  // the keys are checked in order, each with its type (the server's decoder lists the field)
  for (const [k, v] of Object.entries(d.raw)) {
    const key = k as keyof AutoHttpsConfig;
    if (!FIELDS.includes(key)) d.fail(`unknown field "${k}"`);
    if (key === "skip" || key === "skip_certificates") {
      if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
        d.failAt(k, "must be an array of strings");
      }
      out[key] = (v as string[]).map((s) => s.toLowerCase());
    } else {
      if (typeof v !== "boolean") d.failAt(k, "must be a boolean");
      (out as unknown as Record<string, boolean>)[k] = v as boolean;
    }
  }
  return out;
}

/** The result of automatic HTTPS: servers to build and names whose certificates to manage. */
export interface AutoHttpsPlan {
  /** The servers (copies, with TLS policies and redirect routes added). */
  servers: Record<string, Raw>;
  /** Names to manage certificates for. */
  certNames: string[];
}

interface Addr {
  host: string;
  port: number;
}

function parseAddr(listen: string, httpPort: number): Addr[] {
  return expandListenAddress(listen, httpPort)
    .filter((a) => a.network === "tcp")
    .map((a) => {
      const i = a.address.lastIndexOf(":");
      return { host: a.address.slice(0, i), port: Number(a.address.slice(i + 1)) };
    });
}

function redirectRoute(toPort: number, httpPort: number, httpsPort: number, hosts: string[]): Raw {
  let location = "https://{http.request.host}";
  if (![httpPort, httpsPort, 80, 443].includes(toPort)) location += `:${toPort}`;
  location += "{http.request.uri}";
  const match: Raw = { protocol: "http" };
  if (hosts.length) match.host = hosts;
  return {
    match: [match],
    handle: [{
      handler: "static_response",
      status_code: 308,
      headers: { Location: [location] },
      close: true,
    }],
  };
}

/** The first name of a redirect route's host matcher, "" for a catch-all. */
function firstHost(route: Raw): string {
  const host = ((route.match as Raw[] | undefined)?.[0]?.host as string[] | undefined)?.[0];
  return host ?? "";
}

/**
 * Current Caddy's order of the redirect routes of one address (`autohttps.go`, since v2.11.2):
 * by the first host of each, exact names before wildcards, longer before shorter, then
 * alphabetically, the catch-all last; so a host that an exact name and a wildcard both match is
 * redirected to the exact name's port.
 */
function bySpecificity(a: Raw, b: Raw): number {
  const ha = firstHost(a);
  const hb = firstHost(b);
  if ((ha === "") !== (hb === "")) return ha === "" ? 1 : -1;
  const wa = ha.includes("*");
  const wb = hb.includes("*");
  if (wa !== wb) return wa ? 1 : -1;
  if (ha.length !== hb.length) return hb.length - ha.length;
  return ha < hb ? -1 : ha > hb ? 1 : 0;
}

function hasHostMatcher(route: unknown): boolean {
  const sets = (route as Raw | null)?.match;
  return Array.isArray(sets) && sets.some((s) => Array.isArray((s as Raw | null)?.host));
}

/**
 * Applies automatic HTTPS to `apps.http.servers`.
 *
 * @example
 * ```ts ignore
 * const plan = await planAutomaticHttps(rawServers, { httpPort: 80, httpsPort: 443, log, tls });
 * ```
 */
export async function planAutomaticHttps(
  rawServers: Record<string, unknown>,
  o: { httpPort: number; httpsPort: number; log: Logger; tls: () => Promise<TlsApp | undefined> },
): Promise<AutoHttpsPlan> {
  const servers: Record<string, Raw> = structuredClone(rawServers) as Record<string, Raw>;
  const certNames = new Set<string>();
  const redirDomains = new Map<string, Addr[]>();
  let logCfg: unknown;
  for (const [name, srv] of Object.entries(servers)) {
    if (typeof srv !== "object" || srv === null || Array.isArray(srv)) continue;
    const where = `http.servers.${name}`;
    const ah = decodeAutoHttps(srv.automatic_https, `${where}.automatic_https`);
    if (ah.disable) {
      o.log.warn("automatic HTTPS is completely disabled for server", { server_name: name });
      continue;
    }
    const listen = Array.isArray(srv.listen) ? srv.listen.filter((l) => typeof l === "string") : [];
    const addrs = listen.flatMap((l) => parseAddr(l as string, o.httpPort));
    // an inherited socket (fd/, fdgram/) has no port here: not the HTTP port, as in Caddy
    const inherited = listen.some((l) => /^\s*(fd|fdgram)\//.test(l as string));
    if (!inherited && !addrs.some((a) => a.port !== o.httpPort)) {
      if (addrs.length) {
        o.log.debug("server is listening only on the HTTP port, so no automatic HTTPS", {
          server_name: name,
          http_port: o.httpPort,
        });
      }
      continue;
    }
    const hasPolicies = srv.tls_connection_policies !== undefined &&
      srv.tls_connection_policies !== null;
    if (!hasPolicies && !inherited && addrs.every((a) => a.port === o.httpsPort)) {
      o.log.info(
        "server is listening only on the HTTPS port but has no TLS connection policies; adding one to enable TLS",
        {
          server_name: name,
          https_port: o.httpsPort,
        },
      );
      srv.tls_connection_policies = [{}];
    }
    const domains = routeHostNames(srv.routes).filter((d) => !ah.skip.includes(d));
    if (!domains.length && !srv.tls_connection_policies) continue;
    if (srv.logs !== undefined) logCfg = srv.logs;
    if (ah.disable_certificates) {
      o.log.warn("skipping automated certificate management for server because it is disabled", {
        server_name: name,
      });
    } else {
      for (const d of domains) {
        if (!qualifiesForCertificate(d) || ah.skip_certificates.includes(d)) continue;
        const tls = await o.tls();
        if (
          !ah.ignore_loaded_certificates && tls?.matchingCertificates(d).some((c) => !c.managed)
        ) {
          o.log.info(
            "skipping automatic certificate management because one or more matching certificates are already loaded",
            {
              domain: d,
              server_name: name,
            },
          );
          continue;
        }
        certNames.add(d);
      }
    }
    srv.tls_connection_policies ??= [{}];
    if (ah.disable_redirects) {
      o.log.warn("automatic HTTP->HTTPS redirects are disabled", { server_name: name });
      continue;
    }
    o.log.info("enabling automatic HTTP->HTTPS redirects", { server_name: name });
    for (const a of addrs) {
      if (!domains.length) {
        redirDomains.set("", [...(redirDomains.get("") ?? []), a]);
        continue;
      }
      for (const d of domains) {
        if (!redirDomains.has(d) || a.port === o.httpsPort) redirDomains.set(d, [a]);
      }
    }
  }

  // Group domains by the address they are served on, then by redirect server address.
  const byAddr = new Map<string, { addr: Addr; domains: string[] }>();
  for (const [d, addrs] of redirDomains) {
    for (const a of addrs) {
      const key = `${a.host}:${a.port}`;
      const e = byAddr.get(key) ?? { addr: a, domains: [] };
      e.domains.push(d);
      byAddr.set(key, e);
    }
  }
  const redirServers = new Map<string, Raw[]>();
  for (const { addr, domains } of byAddr.values()) {
    const hosts = domains.length === 1 && domains[0] === "" ? [] : domains.filter((d) => d);
    const at = `${addr.host}:${o.httpPort}`;
    redirServers.set(at, [
      ...(redirServers.get(at) ?? []),
      redirectRoute(addr.port, o.httpPort, o.httpsPort, hosts),
    ]);
  }
  for (const routes of redirServers.values()) routes.sort(bySpecificity);
  const catchAll = () => redirectRoute(o.httpsPort, o.httpPort, o.httpsPort, []);
  const remaining: { listen: string[]; routes: Raw[] } = { listen: [], routes: [] };
  for (const [at, routes] of redirServers) {
    const target = parseAddr(at, o.httpPort)[0];
    const host = Object.values(servers).find((s) =>
      Array.isArray(s?.listen) &&
      s.listen.some((l) =>
        typeof l === "string" &&
        parseAddr(l, o.httpPort).some((a) => a.port === target.port && a.host === target.host)
      )
    );
    if (host) {
      const list = Array.isArray(host.routes) ? [...host.routes] : [];
      let insert = 0;
      list.forEach((r, i) => {
        if (hasHostMatcher(r)) insert = i + 1;
      });
      if (certNames.size) list.splice(insert, 0, ...routes);
      list.push(catchAll());
      host.routes = list;
      continue;
    }
    remaining.listen.push(at);
    remaining.routes.push(...routes);
  }
  if (remaining.listen.length) {
    const srv: Raw = { listen: remaining.listen, routes: [...remaining.routes, catchAll()] };
    if (logCfg !== undefined) srv.logs = logCfg;
    servers.remaining_auto_https_redirects = srv;
  }
  return { servers, certNames: [...certNames] };
}
