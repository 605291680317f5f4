/**
 * Logs: the `log` directive of a site (an access log, named `log0`, `log1`, ... unless
 * named) and the global `log` option (a named logger, `default` when unnamed), which share
 * one syntax; and the `logging.logs` section assembled from both.
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";
import { didYouMean } from "../../caddyfile/dispenser.ts";
import type { Helper } from "../../caddyfile/helper.ts";
import { unmarshalModule } from "../../caddyfile/registry.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";
import { goAtoiStrict } from "../../caddyfile/values.ts";
import { parseDuration } from "../../config/duration.ts";

/** A logger's JSON (`writer`, `encoder`, `core`, `level`, `sampling`, `include`, `exclude`). */
export type CustomLog = Record<string, unknown> & { include?: string[]; exclude?: string[] };

/** What one `log` produces. */
export interface NamedCustomLog {
  /** Logger name ("" for an empty site log, which only turns access logging on). */
  name: string;
  /** Host names the log is for (`hostnames`), instead of the site's. */
  hostnames: string[];
  /** The logger config, unless empty. */
  log?: CustomLog;
  /** `no_hostname`: used only through `log_name`. */
  noHostname: boolean;
}

const SUBDIRECTIVES = [
  "hostnames",
  "output",
  "sampling",
  "core",
  "format",
  "level",
  "include",
  "exclude",
  "no_hostname",
];

/**
 * Parses `log [<name>] { ... }`. `globalNames` is given for the global option (names already
 * used); undefined for the site directive.
 */
export function parseLog(h: Helper, globalNames?: Set<string>): ConfigValue[] {
  h.next();
  const global = globalNames !== undefined;
  let name = "";
  if (h.nextArg()) {
    name = h.val();
    if (h.nextArg()) throw h.argErr();
  } else if (global) name = "default";
  if (global) {
    if (globalNames.has(name)) throw h.err(`duplicate global log option for: ${name}`);
    globalNames.add(name);
  }

  const cl: CustomLog = {};
  const hostnames: string[] = [];
  let noHostname = false;
  const seen = new Set<string>();
  const unique = (sub: string) => {
    if (seen.has(sub)) {
      throw h.err(`'${sub}' subdirective specified more than once in the same log block`);
    }
    seen.add(sub);
  };
  for (const n = h.nesting(); h.nextBlock(n);) {
    const sub = h.val();
    switch (sub) {
      case "hostnames": {
        if (global) throw h.err("hostnames is not allowed in the log global options");
        const args = h.remainingArgs();
        if (args.length === 0) throw h.argErr();
        hostnames.push(...args);
        break;
      }
      case "output": {
        unique(sub);
        if (!h.nextArg()) throw h.argErr();
        const module = h.val();
        if (module === "stdout" || module === "stderr" || module === "discard") {
          cl.writer = { output: module };
        } else {
          const w = unmarshalModule(h, `caddy.logging.writers.${module}`) as Record<
            string,
            unknown
          >;
          cl.writer = { ...w, output: module };
        }
        break;
      }
      case "sampling": {
        unique(sub);
        const d = h.newFromNextSegment();
        while (d.nextArg()) { /* arguments on the line are ignored */ }
        cl.sampling = parseSampling(d);
        break;
      }
      case "core": {
        unique(sub);
        if (!h.nextArg()) throw h.argErr();
        const module = h.val();
        const c = unmarshalModule(h, `caddy.logging.cores.${module}`) as Record<string, unknown>;
        cl.core = { ...c, module };
        break;
      }
      case "format": {
        unique(sub);
        if (!h.nextArg()) throw h.argErr();
        const module = h.val();
        const e = unmarshalModule(h, `caddy.logging.encoders.${module}`) as Record<string, unknown>;
        cl.encoder = { ...e, format: module };
        break;
      }
      case "level":
        unique(sub);
        if (!h.nextArg()) throw h.argErr();
        cl.level = h.val();
        if (h.nextArg()) throw h.argErr();
        break;
      case "include":
        if (!global) throw h.err("include is not allowed in the log directive");
        while (h.nextArg()) (cl.include ??= []).push(h.val());
        break;
      case "exclude":
        if (!global) throw h.err("exclude is not allowed in the log directive");
        while (h.nextArg()) (cl.exclude ??= []).push(h.val());
        break;
      case "no_hostname":
        unique(sub);
        if (h.nextArg()) throw h.argErr();
        noHostname = true;
        break;
      default:
        throw h.err(`unrecognized subdirective: ${sub}${didYouMean(sub, SUBDIRECTIVES)}`);
    }
  }

  const empty = Object.keys(cl).length === 0;
  const val: NamedCustomLog = { name: "", hostnames, noHostname };
  if (global) val.name = name;
  else {
    if (name !== "") val.name = name;
    else if (!empty) {
      const counter = (h.scope.state.logCounter as number | undefined) ?? 0;
      val.name = `log${counter}`;
      h.scope.state.logCounter = counter + 1;
    }
    if (val.name !== "") cl.include = [`http.log.access.${val.name}`];
  }
  if (!empty) val.log = cl;
  return [{ class: "custom_log", value: val }];
}

function parseSampling(d: Dispenser): Record<string, number> {
  const sampling: Record<string, number> = {};
  const seen = new Set<string>();
  for (const n = d.nesting(); d.nextBlock(n);) {
    const sub = d.val();
    if (seen.has(sub)) throw d.err(`'${sub}' specified more than once in the same sampling block`);
    seen.add(sub);
    if (!["interval", "first", "thereafter"].includes(sub)) {
      throw d.err(
        `unrecognized subdirective: ${sub}${didYouMean(sub, ["interval", "first", "thereafter"])}`,
      );
    }
    if (!d.nextArg()) throw d.argErr();
    try {
      const v = sub === "interval" ? parseDuration(d.val()) : goAtoiStrict(d.val());
      if (v !== 0) sampling[sub] = v;
      else delete sampling[sub];
    } catch (e) {
      throw d.err(`failed to parse ${sub}: ${(e as Error).message}`);
    }
  }
  return sampling;
}

/**
 * Assembles `logging.logs` from the global `log` options and the sites' `log` directives
 * (Caddy's rules: `debug` sets unset levels to DEBUG; access logs with `include` are
 * excluded from the default log).
 */
export function assembleLogs(
  globalLogs: NamedCustomLog[],
  siteLogs: NamedCustomLog[],
  debug: boolean,
): Record<string, CustomLog> | undefined {
  const custom: NamedCustomLog[] = [];
  let hasDefault = false;
  const add = (ncl: NamedCustomLog) => {
    if (ncl.name === "") return;
    if (ncl.name === "default") hasDefault = true;
    if (debug && ncl.log && !ncl.log.level) ncl.log.level = "DEBUG";
    custom.push(ncl);
  };
  for (const l of globalLogs) add(l);
  if (!hasDefault && debug) {
    custom.push({ name: "default", hostnames: [], noHostname: false, log: { level: "DEBUG" } });
  }
  for (const l of siteLogs) add(l);
  if (custom.length === 0) return undefined;
  const logs: Record<string, CustomLog> = {};
  const dflt = custom.find((c) => c.name === "default" && c.log);
  if (dflt) logs.default = dflt.log!;
  for (const ncl of custom) {
    if (!ncl.log || ncl.name === "default") continue;
    logs[ncl.name] = ncl.log;
    if (ncl.log.include && ncl.log.include.length > 0) {
      const d = logs.default ??= {};
      d.exclude = [...new Set([...(d.exclude ?? []), ...ncl.log.include])].sort();
    }
  }
  return Object.keys(logs).length > 0 ? logs : undefined;
}
