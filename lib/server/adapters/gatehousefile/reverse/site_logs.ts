/**
 * Access logs of sites: a server's `logs` (logger names by host, the catch-all's logger)
 * and the matching `logging.logs` entries → each site's `log [<name>] { ... }`. A logger
 * mapped to exactly a site's hosts is that site's `log`; one mapped to other hosts is a
 * `log` with `hostnames` in the site those hosts fall under (several logs per site and
 * several sites per log both come out as written). What the adapter derives from those
 * directives (the `include` of the site's log, the `exclude` it adds to the default log,
 * `skip_hosts` of sites without `log`) is checked, not written.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { logLines } from "./logging.ts";
import { type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import type { ServerFacts, Site } from "./sites.ts";
import { gline, type Line } from "../../../caddyfile/writer/tokens.ts";

/** One `log` directive of a site: the logger name and the `hostnames` it overrides with. */
interface SiteLog {
  name: string;
  /** Which directive of that name (several may name the same log). */
  k?: number;
  hostnames?: string[];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** True when one of the site hosts (maybe a `*.` wildcard) covers `host`. */
function covers(patterns: string[], host: string): boolean {
  return patterns.some((p) =>
    p === host || (p.startsWith("*.") && host.endsWith(p.slice(1)) &&
      !host.slice(0, -(p.length - 1)).includes("."))
  );
}

/** The `log` directives of every site, from each server's logger names. */
function assignLogs(sites: Site[], facts: ServerFacts): Map<Site, SiteLog[]> {
  const out = new Map<Site, SiteLog[]>();
  const add = (site: Site, log: SiteLog) => {
    const list = out.get(site) ?? [];
    const key = JSON.stringify(log);
    if (!list.some((l) => JSON.stringify(l) === key)) list.push(log);
    out.set(site, list);
  };
  for (const [srv, f] of facts.serverFields) {
    const l = f.obj("logs");
    if (!l) continue;
    const on = sites.filter((s) => s.servers.includes(srv));
    const hostsOf = (s: Site) => s.serverHosts.get(srv) ?? s.hosts;
    for (const s of on.filter((s) => hostsOf(s).length === 0)) {
      if (typeof l.default_logger_name === "string") add(s, { name: l.default_logger_name });
      // a log without settings has no name: the catch-all is simply not skipped
      else if (l.skip_unmapped_hosts !== true) add(s, { name: "" });
    }
    // sites without a log have their hosts skipped
    const skipped = new Set(strings(l.skip_hosts));
    const open = on.filter((s) => hostsOf(s).length > 0 && !hostsOf(s).some((h) => skipped.has(h)));
    // each log directive: a name and the hosts it was written for (the k-th time a host
    // lists a name is the k-th directive of that name)
    const instances = new Map<string, { name: string; k: number; hosts: string[] }>();
    const map = isObject(l.logger_names) ? l.logger_names : {};
    for (const [host, names] of Object.entries(map)) {
      const seen = new Map<string, number>();
      for (const name of strings(names)) {
        const k = seen.get(name) ?? 0;
        seen.set(name, k + 1);
        const key = JSON.stringify([name, k]);
        const inst = instances.get(key) ?? { name, k, hosts: [] };
        if (!inst.hosts.includes(host)) inst.hosts.push(host);
        instances.set(key, inst);
      }
    }
    const order = [...instances.values()];
    const overrides: typeof order = [];
    for (const inst of order) {
      const { name, k, hosts } = inst;
      // sites all of whose hosts log there (a named log belongs to one site)
      const whole = open.filter((s) => hostsOf(s).every((h) => hosts.includes(h)));
      const covered = new Set(whole.flatMap(hostsOf));
      if (
        whole.length && hosts.every((h) => covered.has(h)) && (name === "" || whole.length === 1)
      ) {
        for (const s of whole) add(s, { name, k });
      } else overrides.push(inst);
    }
    // a log for other hosts (`hostnames`) goes where it keeps a site from being skipped,
    // else into a site covering those hosts
    for (const { name, k, hosts } of overrides) {
      const bare = open.filter((s) => !out.has(s));
      const covering = (list: Site[]) => list.find((s) => hosts.some((h) => covers(hostsOf(s), h)));
      const owner = covering(bare) ?? bare[0] ?? covering(open) ?? open[0] ?? on[0];
      if (owner) add(owner, { name, k, hostnames: hosts });
    }
    // each site's logs in the order the logger lists give
    const rank = (l: SiteLog) => order.findIndex((i) => i.name === l.name && i.k === l.k);
    for (const s of on) out.get(s)?.sort((a, b) => rank(a) - rank(b));
  }
  return out;
}

/** Adds `log` directives to the sites from the servers' `logs` and `logging.logs`. */
export function siteLogs(
  sites: Site[],
  facts: ServerFacts,
  logs: Fields | undefined,
  ctx: Ctx,
): void {
  let counter = 0;
  const claimed = new Set<string>();
  const assigned = assignLogs(sites, facts);
  for (const site of sites) {
    for (const { name, hostnames } of assigned.get(site) ?? []) {
      const lines: Line[] = [];
      const lf = name !== "" && !claimed.has(name) ? logs?.fields(name) : undefined;
      if (lf) {
        const inc = lf.value.include;
        if (Array.isArray(inc) && inc.length === 1 && inc[0] === `http.log.access.${name}`) {
          lf.skip("include");
        }
        lines.push(...logLines(lf, false, { debug: ctx.debug }));
        lf.done(`log ${name}`);
        claimed.add(name);
      }
      // the adapter names a log with settings and no name log0, log1, ... in order
      const auto = name === `log${counter}` && lines.length > 0;
      if (auto) counter++;
      if (hostnames) lines.unshift(gline(["hostnames", ...hostnames]));
      const words = auto || name === "" ? ["log"] : ["log", name];
      site.lines.push(gline(words, lines.length ? lines : undefined));
    }
  }
  // the adapter excludes every site log from the default log: not written
  for (const n of claimed) ctx.impliedExcludes.add(`http.log.access.${n}`);
}
