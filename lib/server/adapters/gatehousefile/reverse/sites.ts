/**
 * Servers → site blocks. A server's top-level routes are site blocks when each is terminal,
 * matches hosts (and paths) or nothing, and runs one subroute: the host matcher gives the site
 * addresses, the listen port their port, `automatic_https.skip` their `http://` scheme, and the
 * listen hosts a `bind` directive. A server whose routes are not of that shape is one
 * catch-all site whose routes were written without a wrapper (the adapter does that for a
 * lone site without host matchers). Identical sites on several servers are one block with
 * all their addresses, as they were written.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { bindLines, type ListenAddress, splitListen } from "./listen.ts";
import { MatcherScope } from "../../../caddyfile/writer/matchers.ts";
import { childPath, Fields, isObject, kindOf } from "../../../caddyfile/writer/problems.ts";
import { reverseRoutes } from "./routes.ts";
import { bare, type Block, type Line } from "../../../caddyfile/writer/tokens.ts";
import { errorBlocks } from "./handle_errors.ts";
import { stableJSON } from "../../../caddyfile/types.ts";

/** A site being assembled. */
export interface Site {
  /** Addresses. */
  keys: string[];
  /** Directives of the site (matcher definitions are added in front when done). */
  lines: Line[];
  /** The site's named matchers. */
  scope: MatcherScope;
  /** Identity for merging identical sites of several servers. */
  identity: string;
  /** Hosts of the site (for logs and TLS). */
  hosts: string[];
  /** Server names the site is on. */
  servers: string[];
  /** The site's hosts on each of its servers (a block merged from several servers has more). */
  serverHosts: Map<string, string[]>;
  /** The lowest route group number inside the site's nested blocks (numbered in source order). */
  nestedGroup: number;
}

/** The lowest `groupN` number in routes nested below the top level of `routes`. */
function lowestNestedGroup(routes: unknown, depth = 0): number {
  let low = Infinity;
  if (!Array.isArray(routes)) return low;
  for (const r of routes) {
    if (!isObject(r)) continue;
    if (depth > 0 && typeof r.group === "string") {
      const m = r.group.match(/^group(\d+)$/);
      if (m) low = Math.min(low, Number(m[1]));
    }
    for (const h of Array.isArray(r.handle) ? r.handle : []) {
      if (!isObject(h)) continue;
      low = Math.min(low, lowestNestedGroup(h.routes, depth + 1));
      for (const hr of Array.isArray(h.handle_response) ? h.handle_response : []) {
        if (isObject(hr)) low = Math.min(low, lowestNestedGroup(hr.routes, depth + 1));
      }
    }
  }
  return low;
}

/**
 * What the server's access logs say about a site's hosts: blocks on several servers are one
 * block only when they log alike (the same loggers, or skipped alike, on each).
 */
function logIdentity(logs: unknown, hosts: string[]): unknown {
  if (!isObject(logs)) return null;
  if (hosts.length === 0) {
    return [logs.default_logger_name ?? null, logs.skip_unmapped_hosts ?? null];
  }
  const names = isObject(logs.logger_names) ? logs.logger_names : {};
  const skip = Array.isArray(logs.skip_hosts) ? logs.skip_hosts : [];
  return hosts.map((h) => [names[h] ?? null, skip.includes(h)]);
}

/** What the servers part leaves for the global options. */
export interface ServerFacts {
  /** Values of `auto_https` seen per server (`off`, `disable_redirects`, ...). */
  autoHttps: Set<string>[];
  /** Each server's fields not read yet (server options), by server name. */
  serverFields: Map<string, Fields>;
  /** Each server's TLS connection policies, by server name. */
  connPolicies: Map<string, { value: unknown; path: string }>;
}

function isSiteRoute(r: unknown): boolean {
  if (!isObject(r) || r.terminal !== true) return false;
  if (Object.keys(r).some((k) => !["match", "handle", "terminal"].includes(k))) return false;
  if (r.handle !== undefined) {
    const h = r.handle;
    if (!Array.isArray(h) || h.length !== 1 || !isObject(h[0]) || h[0].handler !== "subroute") {
      return false;
    }
  }
  if (r.match === undefined) return true;
  return Array.isArray(r.match) && r.match.length > 0 &&
    r.match.every((s) =>
      isObject(s) && Object.keys(s).length > 0 &&
      Object.keys(s).every((k) => k === "host" || k === "path") &&
      (s.host === undefined || (Array.isArray(s.host) && s.host.length > 0)) &&
      (s.path === undefined || (Array.isArray(s.path) && s.path.length === 1)) &&
      [...(s.host as unknown[] ?? []), ...(s.path as unknown[] ?? [])].every((x) =>
        typeof x === "string"
      )
    );
}

function hostKey(host: string, port: string, scheme: string, httpPort: string): string {
  const h = host.includes(":") ? `[${host}]` : host;
  if (port === httpPort && scheme !== "https") return `http://${h}`;
  if (port === "443" && scheme !== "http") return h;
  // a socket listener (fd/, unix/) has no port: the scheme alone says which
  if (port === "") return scheme === "http" ? `http://${h}` : h;
  return `${scheme ? scheme + "://" : ""}${h}:${port}`;
}

/**
 * A server with neither listen addresses nor routes: the adapter leaves one behind when the
 * protocols of a listener all went to an earlier server (as Caddy does), with the options
 * every server gets. Nothing to write; a field no other server has is reported.
 */
function impliedEmptyServer(f: Fields, servers: Record<string, unknown>, ctx: Ctx): void {
  const others = Object.values(servers).filter((o) => isObject(o) && o !== f.value) as Record<
    string,
    unknown
  >[];
  for (const k of f.rest()) {
    if (k === "automatic_https") continue;
    const v = stableJSON(f.value[k]);
    if (!others.some((o) => stableJSON(o[k]) === v)) {
      ctx.problems.add(
        f.at(k),
        `field ${k} of a server without listen addresses or routes has no Gatehousefile form`,
      );
    }
  }
}

/** Writes every server's sites; returns them in order with facts for the global options. */
export function reverseServers(
  servers: Record<string, unknown>,
  path: string,
  ctx: Ctx,
  httpPort: string,
): { sites: Site[]; facts: ServerFacts } {
  const sites: Site[] = [];
  const facts: ServerFacts = { autoHttps: [], serverFields: new Map(), connPolicies: new Map() };
  const names = Object.keys(servers).sort((a, b) =>
    (Number(a.replace(/^srv/, "")) || 0) - (Number(b.replace(/^srv/, "")) || 0)
  );
  for (const name of names) {
    const sp = childPath(path, name);
    const srv = servers[name];
    if (!isObject(srv)) {
      ctx.problems.add(sp, `a server must be an object, got ${kindOf(srv)}`);
      continue;
    }
    const f = new Fields(srv, sp, ctx.problems);
    const listen = (f.strs("listen") ?? []).map((a, i) => {
      const l = splitListen(a);
      if (!l) ctx.problems.add(childPath(f.at("listen"), i), `cannot read listen address ${a}`);
      return l;
    }).filter((l): l is ListenAddress => l !== undefined);
    const ah = f.fields("automatic_https");
    const skip = new Set(ah?.strs("skip") ?? []);
    const autoHttps = new Set<string>();
    if (ah) {
      if (ah.bool("disable")) autoHttps.add("off");
      if (ah.bool("disable_redirects")) autoHttps.add("disable_redirects");
      if (ah.bool("disable_certificates")) autoHttps.add("disable_certs");
      if (ah.bool("ignore_loaded_certificates")) autoHttps.add("ignore_loaded_certs");
      ah.done("automatic_https");
    }
    facts.autoHttps.push(autoHttps);
    if (listen.length === 0) {
      if (!f.has("listen") && !f.has("routes") && !f.has("errors") && skip.size === 0) {
        impliedEmptyServer(f, servers, ctx);
      } else {
        ctx.problems.add(
          f.has("listen") ? f.at("listen") : f.path,
          "a server without listen addresses has no site form",
        );
      }
      f.skip(...f.rest());
      continue;
    }
    const port = listen[0].port;
    if (listen.some((l) => l.port !== port)) {
      ctx.problems.add(
        f.at("listen"),
        "listen addresses with different ports come from different site addresses, which the Gatehousefile puts on separate servers",
      );
    }
    const binds = bindLines(
      listen,
      f.take("listen_protocols"),
      f.at("listen_protocols"),
      ctx.problems,
    );
    f.skip("named_routes");
    const hasTlsPolicies = f.has("tls_connection_policies");
    if (hasTlsPolicies) {
      facts.connPolicies.set(name, {
        value: f.take("tls_connection_policies"),
        path: f.at("tls_connection_policies"),
      });
    }
    const routes = f.arr("routes") ?? [];
    const errors = f.fields("errors");
    const errorRoutes = errors?.arr("routes") ?? [];
    errors?.done("server errors");
    const flat = routes.length === 0 || !routes.every(isSiteRoute) ||
      !errorRoutes.every(isSiteRoute);
    const serverSites: Site[] = [];
    const makeSite = (keys: string[], hosts: string[]): Site => ({
      keys,
      lines: [],
      scope: new MatcherScope(ctx.problems),
      identity: "",
      hosts,
      servers: [name],
      serverHosts: new Map([[name, hosts]]),
      nestedGroup: Infinity,
    });
    const usedSkip = new Set<string>();
    const keysOf = (match: unknown): { keys: string[]; hosts: string[] } => {
      if (!Array.isArray(match)) {
        const scheme = hasTlsPolicies && port !== "443" && port !== httpPort ? "https://" : "";
        return { keys: [`${scheme}:${port}`], hosts: [] };
      }
      const keys: string[] = [], hosts: string[] = [];
      for (const set of match as Record<string, string[]>[]) {
        const p = set.path?.[0] ?? "";
        for (const h of set.host ?? [""]) {
          if (h === "") {
            keys.push(`:${port}${p}`);
            continue;
          }
          hosts.push(h);
          let scheme = "";
          if (skip.has(h) && port !== httpPort) {
            scheme = "http";
            usedSkip.add(h);
          }
          keys.push(hostKey(h, port, scheme, httpPort) + p);
        }
      }
      return { keys, hosts };
    };
    if (flat) {
      const site = makeSite([`:${port}`], []);
      ctx.scope = site.scope;
      site.lines.push(...reverseRoutes(routes, f.at("routes"), ctx, true));
      site.lines.push(...errorBlocks(errorRoutes, errors?.at("routes") ?? "", ctx));
      site.identity = JSON.stringify([routes, errorRoutes]);
      site.nestedGroup = lowestNestedGroup(routes);
      serverSites.push(site);
    } else {
      routes.forEach((r, i) => {
        const route = r as Record<string, unknown>;
        const rp = childPath(f.at("routes"), i);
        const { keys, hosts } = keysOf(route.match);
        const site = makeSite(keys, hosts);
        ctx.scope = site.scope;
        const sub = (route.handle as Record<string, unknown>[] | undefined)?.[0];
        if (sub) {
          const sf = new Fields(sub, childPath(childPath(rp, "handle"), 0), ctx.problems);
          sf.skip("handler");
          const inner = sf.take("routes");
          site.nestedGroup = lowestNestedGroup(inner);
          site.lines.push(...reverseRoutes(inner, sf.at("routes"), ctx, true));
          sf.done("a site's subroute");
        }
        const er = errorRoutes.filter((e) =>
          JSON.stringify((e as Record<string, unknown>).match) === JSON.stringify(route.match)
        );
        for (const e of er) {
          const idx = errorRoutes.indexOf(e);
          const eh = ((e as Record<string, unknown>).handle as Record<string, unknown>[])?.[0];
          const ep = childPath(childPath(childPath(errors!.at("routes"), idx), "handle"), 0);
          site.lines.push(
            ...errorBlocks(
              Array.isArray(eh?.routes) ? eh.routes : [],
              childPath(ep, "routes"),
              ctx,
            ),
          );
        }
        site.identity = JSON.stringify([
          route.handle,
          er.map((e) => (e as Record<string, unknown>).handle),
        ]);
        serverSites.push(site);
      });
      errorRoutes.forEach((e, i) => {
        const m = JSON.stringify((e as Record<string, unknown>).match);
        if (!routes.some((r) => JSON.stringify((r as Record<string, unknown>).match) === m)) {
          ctx.problems.add(
            childPath(errors!.at("routes"), i),
            "error routes for hosts that have no site",
          );
        }
      });
    }
    for (const h of skip) {
      if (!usedSkip.has(h)) {
        ctx.problems.add(
          f.at("automatic_https") + "/skip",
          `skipping automatic HTTPS for ${h} has a Gatehousefile form only as an http:// site address on this server`,
        );
      }
    }
    for (const s of serverSites) s.lines.unshift(...binds.map((b) => ({ ...b })));
    facts.serverFields.set(name, f);
    for (const s of serverSites) {
      s.identity += JSON.stringify([binds, logIdentity(srv.logs, s.hosts)]);
      const same = sites.find((o) => o.identity === s.identity && !o.servers.includes(name));
      if (same) {
        same.keys.push(...s.keys.filter((k) => !same.keys.includes(k)));
        same.servers.push(name);
        same.serverHosts.set(name, s.hosts);
      } else sites.push(s);
    }
  }
  return { sites, facts };
}

/**
 * Site blocks for the sites (matcher definitions first). Sites with nested route groups are
 * put in the order of their group numbers, which the adapter hands out in source order;
 * the other sites keep their places.
 */
export function siteBlocks(sites: Site[]): Block[] {
  const slots = sites.map((s, i) => ({ s, i })).filter((x) => x.s.nestedGroup !== Infinity);
  const ordered = [...sites];
  const byGroup = slots.map((x) => x.s).sort((a, b) => a.nestedGroup - b.nestedGroup);
  slots.forEach((x, k) => ordered[x.i] = byGroup[k]);
  return ordered.map((s) => ({
    keys: s.keys.map((k) => bare(k)),
    lines: [...s.scope.definitions, ...s.lines],
  }));
}
