/**
 * Access logs of sites: a server's `logs` (logger names by host, the catch-all's logger)
 * and the matching `logging.logs` entries → each site's `log [<name>] { ... }`. What the
 * adapter derives from those directives (the `include` of the site's log, the `exclude` it
 * adds to the default log, `skip_hosts` of sites without `log`) is checked, not written.
 *
 * @module
 */
import type { Ctx } from "./context.ts";
import { logLines } from "./logging.ts";
import { type Fields, isObject } from "./problems.ts";
import type { ServerFacts, Site } from "./sites.ts";
import { gline, type Line } from "./tokens.ts";

/** Adds `log` directives to the sites from the servers' `logs` and `logging.logs`. */
export function siteLogs(
  sites: Site[],
  facts: ServerFacts,
  logs: Fields | undefined,
  ctx: Ctx,
): void {
  let counter = 0;
  const claimed = new Set<string>();
  const byServer = new Map<string, Record<string, unknown>>();
  for (const [name, f] of facts.serverFields) {
    const l = f.obj("logs");
    if (l) byServer.set(name, l);
  }
  for (const site of sites) {
    const names: string[] = [];
    for (const srv of site.servers) {
      const l = byServer.get(srv);
      if (!l) continue;
      const map = isObject(l.logger_names) ? l.logger_names : {};
      if (site.hosts.length === 0) {
        if (typeof l.default_logger_name === "string") names.push(l.default_logger_name);
        // a log without settings has no name: the catch-all is simply not skipped
        else if (l.skip_unmapped_hosts !== true && !names.includes("")) names.push("");
        continue;
      }
      for (const [host, list] of Object.entries(map)) {
        const bare = host.replace(/:\d+$/, "");
        if (!site.hosts.includes(bare) && !site.hosts.includes(host)) continue;
        for (const n of Array.isArray(list) ? list : []) {
          if (!names.includes(String(n))) names.push(String(n));
        }
      }
    }
    for (const name of names) {
      const lines: Line[] = [];
      if (name !== "" && logs?.has(name)) {
        const lf = logs.fields(name)!;
        const inc = lf.value.include;
        if (Array.isArray(inc) && inc.length === 1 && inc[0] === `http.log.access.${name}`) {
          lf.skip("include");
        }
        lines.push(...logLines(lf, false, { debug: ctx.debug }));
        lf.done(`log ${name}`);
        claimed.add(name);
      }
      const auto = name === `log${counter}` && lines.length > 0;
      if (auto) counter++;
      const words = auto || name === "" ? ["log"] : ["log", name];
      site.lines.push(gline(words, lines.length ? lines : undefined));
    }
  }
  // the adapter excludes every site log from the default log: not written
  for (const n of claimed) ctx.impliedExcludes.add(`http.log.access.${n}`);
}
