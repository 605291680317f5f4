/**
 * One http server per pairing of listeners and site blocks: site blocks sorted most specific
 * first, each block's routes wrapped behind its host (and path) matchers, error routes,
 * named routes, automatic-HTTPS options, TLS connection policies and access-log mapping.
 *
 * @module
 */
import { specificity } from "./address.ts";
import { siteError, type Where, withContext } from "../../caddyfile/dispenser.ts";
import { goStableSort } from "../../caddyfile/gosort.ts";
import type { AdaptContext } from "../../caddyfile/helper.ts";
import {
  hasHostCatchAllKey,
  hostsFromKeys,
  type Pairing,
  ports,
  type SiteBlock,
} from "./listeners.ts";
import { splitHostPort } from "../../caddyfile/netaddr.ts";
import { buildSubroute, consolidateRoutes } from "../../caddyfile/routes.ts";
import { applyServerOptions } from "./server_options.ts";
import type { ServerJSON } from "./server_json.ts";
import { addConnectionPolicies, detectConflictingSchemes } from "./conn_policies.ts";
import type { NamedCustomLog } from "./logs.ts";
import { type MatcherSet, type Route, subrouteHandler } from "../../caddyfile/types.ts";

/** A named route invoked, and where (`invoke <name>`). */
export interface Invocation {
  /** The named route. */
  name: string;
  /** The `invoke` directive's name token. */
  where?: Where;
}

/** Sorts a pairing's site blocks: most specific host first, catch-all hosts last. */
function sortSiteBlocks(blocks: SiteBlock[]): void {
  const facts = (sb: SiteBlock) => {
    let path = "", host = "", wildcard = false;
    for (const a of sb.parsedKeys) {
      if (a.host.includes("*") || a.host === "") wildcard = true;
      if (specificity(a.host) > specificity(host)) host = a.host;
      if (specificity(a.path) > specificity(path)) path = a.path;
    }
    return { path, host, wildcard };
  };
  goStableSort(blocks, (x, y) => {
    const i = facts(x), j = facts(y);
    if (specificity(i.host) === 0) return false;
    if (specificity(j.host) === 0) return true;
    if (i.wildcard !== j.wildcard) return j.wildcard && !i.wildcard;
    if (specificity(i.host) === specificity(j.host)) return i.path.length > j.path.length;
    return specificity(i.host) > specificity(j.host);
  });
}

/** The host/path matcher sets of a site block's keys. */
function siteMatcherSets(sb: SiteBlock): MatcherSet[] {
  const pairs: { hosts?: string[]; paths?: string[] }[] = [];
  let catchAll = false;
  for (const a of sb.parsedKeys) {
    let chosen = pairs.find((p) =>
      (!p.paths && a.path === "") || (p.paths?.length === 1 && p.paths[0] === a.path)
    );
    if (!chosen) {
      chosen = a.path !== "" ? { paths: [a.path] } : {};
      pairs.push(chosen);
    }
    if (a.host === "" && !catchAll) {
      chosen.hosts = undefined;
      catchAll = true;
    }
    if (catchAll) continue;
    if (a.host !== "" && !(chosen.hosts ?? []).includes(a.host)) {
      chosen.hosts = [...(chosen.hosts ?? []), a.host];
    }
  }
  const sets: MatcherSet[] = [];
  for (const p of pairs) {
    const set: MatcherSet = {};
    if (p.hosts?.length) set.host = p.hosts;
    if (p.paths?.length) set.path = p.paths;
    if (Object.keys(set).length > 0) sets.push(set);
  }
  return sets;
}

/** Appends a site's routes to a route list, wrapped in a terminal subroute when needed. */
function appendSiteRoutes(
  list: Route[],
  routes: Route[],
  errors: Route[] | undefined,
  matchers: MatcherSet[],
  pairing: Pairing,
): Route[] {
  if (matchers.length === 0 && routes.length === 0 && errors === undefined) return list;
  // a lone site without matchers needs no wrapper, unless a host matcher inside it would
  // otherwise become a top-level host matcher (subject to automatic HTTPS)
  let wrap = true;
  if (matchers.length === 0 && pairing.blocks.length === 1) {
    wrap = routes.some((r) => (r.match ?? []).some((ms) => "host" in ms));
  }
  if (!wrap) return [...list, ...routes];
  const route: Route = {};
  if (matchers.length > 0) route.match = matchers;
  if (routes.length > 0 || errors !== undefined) route.handle = [subrouteHandler(routes, errors)];
  route.terminal = true;
  if (route.match || route.handle) list.push(route);
  return list;
}

/** Builds every server (`srv0`, `srv1`, ... or the names from `servers` options). */
export function serversFromPairings(
  pairings: Pairing[],
  ctx: AdaptContext,
): Record<string, ServerJSON> {
  const options = ctx.options;
  const servers: Record<string, ServerJSON> = {};
  const { http: httpPort, https: httpsPort } = ports(options);
  const autoHTTPS = (options.get("auto_https") as string[] | undefined) ?? [];
  const namedRoutes = (options.get("named_routes") as Map<string, Route>) ?? new Map();
  const namedRouteInvokes = (options.get("named_route_invokes") as Map<string, Invocation[]>) ??
    new Map();

  pairings.forEach((p, index) => {
    // the same host twice on one listener is ambiguous (the error names the second)
    const blockOfKey = new Map<string, number>();
    p.blocks.forEach((b, j) => {
      for (const key of b.block.keys) {
        const first = blockOfKey.get(key.text);
        if (first !== undefined && first !== j) {
          throw siteError(key, `ambiguous site definition: ${key.text}`);
        }
        blockOfKey.set(key.text, j);
      }
    });

    const srv: ServerJSON = {};
    if (p.listeners.length > 0) srv.listen = p.listeners.map((l) => l.address);
    const protocols = p.listeners.map((l) =>
      l.protocols.some((x) => x !== "") ? l.protocols : null
    );
    if (protocols.some((x) => x !== null)) srv.listen_protocols = protocols;

    for (const v of autoHTTPS) {
      const ah = srv.automatic_https ??= {};
      if (v === "off") ah.disable = true;
      else if (v === "disable_redirects") ah.disable_redirects = true;
      else if (v === "disable_certs") ah.disable_certificates = true;
      else if (v === "ignore_loaded_certs") ah.ignore_loaded_certificates = true;
    }

    for (const sb of p.blocks) {
      sb.parsedKeys.forEach((a, i) => {
        if (a.path !== "") {
          ctx.warnings.push({
            file: sb.block.keys[i]?.file,
            line: sb.block.keys[i]?.line,
            message:
              `Using a path in a site address is deprecated; please use the 'handle' directive instead (${a.original})`,
          });
        }
      });
    }

    sortSiteBlocks(p.blocks);

    if (p.blocks.some((sb) => (sb.pile.get("custom_log") ?? []).length > 0)) srv.logs = {};

    // named routes invoked from this server (and those they invoke)
    for (const sb of p.blocks) {
      for (const v of sb.pile.get("named_route") ?? []) {
        const named = (srv.named_routes ??= {}) as Record<string, Route>;
        const queue: Invocation[] = [{ name: v.value as string, where: v.token }];
        while (queue.length > 0) {
          const { name, where } = queue.shift()!;
          if (name in named) continue;
          const route = namedRoutes.get(name);
          if (!route) {
            const message = `cannot invoke named route '${name}', which was not defined`;
            throw where ? siteError(where, message) : new Error(message);
          }
          named[name] = route;
          queue.push(...(namedRouteInvokes.get(name) ?? []));
        }
      }
    }

    const tls = addConnectionPolicies(srv, ctx, { httpPort, httpsPort });

    for (const sb of p.blocks) {
      const matchers = siteMatcherSets(sb);
      const hosts = hostsFromKeys(sb, false);
      for (const h of hosts) {
        if (h === "0.0.0.0" || h === "::") {
          const key = sb.block.keys[sb.parsedKeys.findIndex((a) => a.host === h)];
          ctx.warnings.push({
            file: key?.file,
            line: key?.line,
            message:
              `Site block has an unspecified IP address which only matches requests having that Host header; you probably want the 'bind' directive to configure the socket (${h})`,
          });
        }
      }
      tls.addSite(sb, hosts);
      for (const v of sb.pile.get("listener_wrapper") ?? []) {
        srv.listener_wrappers = [...(srv.listener_wrappers as unknown[] ?? []), v.value];
      }
      for (const v of sb.pile.get("packet_conn_wrapper") ?? []) {
        srv.packet_conn_wrappers = [...(srv.packet_conn_wrappers as unknown[] ?? []), v.value];
      }

      const siteRoutes = buildSubroute([...(sb.pile.get("route") ?? [])], ctx, true);
      srv.routes = appendSiteRoutes(srv.routes ?? [], siteRoutes, undefined, matchers, p);
      if (srv.routes.length === 0) delete srv.routes;

      const errorVals = sb.pile.get("error_route");
      if (errorVals) {
        srv.errors ??= {};
        // (sorted in place, as Caddy does: a block served on two listeners sees it sorted)
        goStableSort(errorVals, (x, y) => {
          const xr = (x.value as Route[])[0], yr = (y.value as Route[])[0];
          return !(!(xr.match?.length) && !!(yr.match?.length));
        });
        const errRoutes = errorVals.flatMap((v) => v.value as Route[]);
        srv.errors.routes = appendSiteRoutes(
          srv.errors.routes ?? [],
          errRoutes,
          undefined,
          matchers,
          p,
        );
      }

      // access logs: which logger each host of this block uses
      const logHosts = hostsFromKeys(sb, true);
      const logs = sb.pile.get("custom_log") ?? [];
      for (const v of logs) {
        const ncl = v.value as NamedCustomLog;
        if (ncl.noHostname) continue;
        const l = srv.logs!;
        if (hasHostCatchAllKey(sb) && ncl.hostnames.length === 0) {
          if (ncl.name) l.default_logger_name = ncl.name;
          else delete l.default_logger_name;
        } else {
          const names = (l.logger_names ??= {});
          const hosts = ncl.hostnames.length > 0
            ? ncl.hostnames
            : logHosts.map((h) => hostWithoutPort(h));
          for (const h of hosts) (names[h] ??= []).push(ncl.name);
        }
      }
      if (srv.logs && logs.length === 0) {
        if (hosts.length === 0) srv.logs.skip_unmapped_hosts = true;
        srv.logs.skip_hosts = [...(srv.logs.skip_hosts ?? []), ...logHosts];
      }
    }
    if (srv.logs?.skip_hosts) {
      srv.logs.skip_hosts.sort();
      if (srv.logs.skip_hosts.length === 0) delete srv.logs.skip_hosts;
    }

    detectConflictingSchemes(srv, p.blocks, options);
    tls.finish();
    if (srv.routes) srv.routes = consolidateRoutes(srv.routes);
    servers[`srv${index}`] = srv;
  });

  try {
    applyServerOptions(servers, options);
  } catch (e) {
    throw withContext(e, "applying global server options: ");
  }
  return servers;
}

function hostWithoutPort(h: string): string {
  try {
    return splitHostPort(h)[0];
  } catch {
    return h;
  }
}
