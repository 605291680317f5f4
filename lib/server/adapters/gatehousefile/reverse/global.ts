/**
 * The top of the config → global options and blocks: `admin` (and `persist_config`),
 * `storage`, `logging` (logs not claimed by a site's `log`), the http app's ports and
 * periods, `auto_https`, server options, then the servers' sites and named routes. Apps
 * without a Gatehousefile form are reported.
 *
 * @module
 */
import type { Ctx } from "../../../caddyfile/writer/context.ts";
import { durationText } from "../../../config/duration.ts";
import { logLines } from "./logging.ts";
import { childPath, Fields, isObject, kindOf } from "../../../caddyfile/writer/problems.ts";
import { serverOptionLines } from "./server_options.ts";
import { reverseServers, siteBlocks } from "./sites.ts";
import { type Block, gline, type Line } from "../../../caddyfile/writer/tokens.ts";
import { namedRouteBlocks } from "./named_routes.ts";
import { siteLogs } from "./site_logs.ts";
import { reverseTlsApp } from "./tls.ts";
import { reversePki } from "./pki.ts";

/** Global option lines and the other blocks of the config. */
export function reverseGlobal(config: unknown, ctx: Ctx): { global: Line[]; blocks: Block[] } {
  const global: Line[] = [];
  if (config === null || config === undefined) return { global, blocks: [] };
  if (!isObject(config)) {
    ctx.problems.add("", `a config must be an object, got ${kindOf(config)}`);
    return { global, blocks: [] };
  }
  const root = new Fields(config, "", ctx.problems);
  admin(root, global);
  storage(root, global);
  const apps = root.fields("apps");
  const http = apps?.fields("http");
  let blocks: Block[] = [];
  const logs = root.fields("logging");
  const logsObj = logs?.fields("logs");
  const def = logsObj?.value.default;
  if (isObject(def) && def.level === "DEBUG") {
    ctx.debug = true;
    global.push(gline(["debug"]));
  }
  if (http) {
    const httpPort = http.num("http_port");
    if (httpPort !== undefined) global.push(gline(["http_port", String(httpPort)]));
    const httpsPort = http.num("https_port");
    if (httpsPort !== undefined) global.push(gline(["https_port", String(httpsPort)]));
    const metrics = http.fields("metrics");
    if (metrics) {
      const b: Line[] = [];
      if (metrics.bool("per_host")) b.push(gline(["per_host"]));
      if (metrics.bool("otlp")) b.push(gline(["otlp"]));
      metrics.done("metrics");
      global.push(gline(["metrics"], b.length ? b : undefined));
    }
    for (const k of ["grace_period", "shutdown_delay"]) {
      if (!http.has(k)) continue;
      const d = durationText(http.take(k));
      if (d === undefined) ctx.problems.add(http.at(k), "must be a duration");
      else global.push(gline([k, d]));
    }
    const servers = http.obj("servers") ?? {};
    const { sites, facts } = reverseServers(
      servers,
      http.at("servers"),
      ctx,
      String(httpPort ?? 80),
    );
    siteLogs(sites, facts, logsObj, ctx);
    global.push(...reverseTlsApp(apps?.fields("tls"), sites, facts.connPolicies, ctx));
    const ah = facts.autoHttps;
    const first = [...(ah[0] ?? [])].sort().join(" ");
    if (ah.some((s) => [...s].sort().join(" ") !== first)) {
      ctx.problems.add(
        http.at("servers"),
        "automatic_https differs between servers; the auto_https global option sets it for all",
      );
    }
    for (const v of ah[0] ?? []) global.push(gline(["auto_https", v]));
    for (const [name, sf] of facts.serverFields) {
      const lines = serverOptionLines(sf, name, /^srv\d+$/.test(name));
      sf.done(`server ${name}`);
      const listen = servers[name] as Record<string, unknown>;
      const addr = Array.isArray(listen.listen) ? String(listen.listen[0]) : "";
      if (lines.length) global.push(gline(["servers", addr], lines));
    }
    blocks = siteBlocks(sites);
    blocks.push(...namedRouteBlocks(servers, http.at("servers"), ctx));
    http.done("the http app");
  }
  const pki = apps?.fields("pki");
  if (pki) global.push(...reversePki(pki, ctx));
  if (!http && apps?.has("tls")) {
    global.push(...reverseTlsApp(apps.fields("tls"), [], new Map(), ctx));
  }
  if (logs && logsObj) {
    for (const name of logsObj.rest()) {
      const lf = logsObj.fields(name);
      if (!lf) continue;
      const lines = logLines(lf, true, { debug: ctx.debug, excludes: ctx.impliedExcludes });
      lf.done(`log ${name}`);
      // a default log holding only what the adapter adds by itself is not written
      if (name === "default" && lines.length === 0) continue;
      global.push(
        gline(name === "default" ? ["log"] : ["log", name], lines.length ? lines : undefined),
      );
    }
    logsObj.done("logging.logs");
    logs.done("logging");
  }
  if (apps) apps.done("the apps");
  root.done("the config");
  return { global, blocks };
}

function admin(root: Fields, global: Line[]): void {
  const a = root.fields("admin");
  if (!a) return;
  const cfg = a.fields("config");
  if (cfg) {
    if (cfg.bool("persist") === false) global.push(gline(["persist_config", "off"]));
    cfg.done("admin.config");
  }
  const disabled = a.bool("disabled");
  const listen = a.str("listen");
  const block: Line[] = [];
  if (a.bool("enforce_origin")) block.push(gline(["enforce_origin"]));
  const origins = a.strs("origins");
  if (origins) block.push(gline(["origins", ...origins]));
  a.done("admin");
  if (disabled) global.push(gline(["admin", "off"]));
  else if (listen !== undefined || block.length) {
    global.push(
      gline(["admin", ...(listen !== undefined ? [listen] : [])], block.length ? block : undefined),
    );
  }
}

function storage(root: Fields, global: Line[]): void {
  const s = root.fields("storage");
  if (!s) return;
  const mod = s.str("module");
  if (mod === "file_system") {
    const r = s.str("root");
    global.push(gline(["storage", "file_system", ...(r !== undefined ? [r] : [])]));
  } else {
    s.problems.add(
      s.has("module") ? childPath(s.path, "module") : s.path,
      `storage module ${mod} has no Gatehousefile form here`,
    );
    s.skip(...s.rest());
  }
  s.done("storage");
}
