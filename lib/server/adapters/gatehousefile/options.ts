/**
 * Global options (the first block, without a site address): `debug`, `admin`, `http_port`,
 * `https_port`, `auto_https`, `persist_config`, `default_bind`, `grace_period`, `order`,
 * `storage`, `log`, `servers`, ... Each returns a value kept by name for the adapter; TLS and
 * PKI options are in `options_tls.ts`.
 *
 * @module
 */
import type { AdapterWarning } from "../../adapter.ts";
import { didYouMean, type Dispenser } from "../../caddyfile/dispenser.ts";
import {
  directiveNames,
  getDirective,
  registerGlobalOption,
  unmarshalModule,
} from "../../caddyfile/registry.ts";
import type { BindValue } from "./listeners.ts";
import { parseLog } from "./logs.ts";
import { splitNetworkAddress } from "../../caddyfile/netaddr.ts";
import { parseServerOptions } from "./server_options.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";
import { goAtoiStrict } from "../../caddyfile/values.ts";
import { parseDuration } from "../../config/duration.ts";

/** `debug`, `local_certs`, `skip_install_trust`: present means true. */
export const optTrue = (): boolean => true;

function port(d: Dispenser): number {
  d.next();
  const a = d.allArgs(1);
  if (!a) throw d.argErr();
  try {
    return goAtoiStrict(a[0]);
  } catch (e) {
    throw d.err(`converting port '${a[0]}' to integer value: ${(e as Error).message}`);
  }
}

/** A single string argument. */
export function optSingleString(d: Dispenser): string {
  d.next();
  if (!d.next()) throw d.argErr();
  const v = d.val();
  if (d.next()) throw d.argErr();
  return v;
}

/** A duration (nanoseconds in JSON). */
export function optDuration(d: Dispenser): number {
  if (!d.next()) throw d.argErr();
  if (!d.next()) throw d.argErr();
  return parseDuration(d.val());
}

function optOrder(d: Dispenser, _existing: unknown, h: { ctx: { order: string[] } }): string[] {
  d.next();
  if (!d.next()) throw d.argErr();
  const dir = d.val();
  if (!getDirective(dir)) {
    throw d.err(`${dir} is not a registered directive${didYouMean(dir, directiveNames())}`);
  }
  if (!d.next()) throw d.argErr();
  const pos = d.val();
  let order = h.ctx.order.filter((x) => x !== dir);
  if (pos === "first" || pos === "last") {
    order = pos === "first" ? [dir, ...order] : [...order, dir];
    if (d.nextArg()) throw d.argErr();
  } else if (pos === "before" || pos === "after") {
    if (!d.nextArg()) throw d.argErr();
    const other = d.val();
    if (d.nextArg()) throw d.argErr();
    let idx = order.indexOf(other);
    if (idx < 0) throw d.err(`directive '${other}' not found`);
    if (pos === "after") idx++;
    order.splice(idx, 0, dir);
  } else {
    throw d.unknownSubdirective(["first", "last", "before", "after"], "unknown positional '%s'");
  }
  h.ctx.order = order;
  return order;
}

function optStorage(d: Dispenser): Record<string, unknown> {
  if (!d.next()) throw d.argErr();
  if (!d.next()) throw d.argErr();
  const name = d.val();
  const s = unmarshalModule(d, `caddy.storage.${name}`) as Record<string, unknown>;
  return { ...s, module: name };
}

function optOffOnly(name: string): (d: Dispenser) => string {
  return (d) => {
    d.next();
    if (!d.next()) throw d.argErr();
    const v = d.val();
    if (d.next()) throw d.argErr();
    if (v !== "off") throw d.err(`${name} must be 'off'`);
    return v;
  };
}

function optStorageCleanInterval(d: Dispenser): number | false {
  d.next();
  if (!d.next()) throw d.argErr();
  const v = d.val();
  if (d.next()) throw d.argErr();
  if (v === "off") return false;
  try {
    return parseDuration(v);
  } catch (e) {
    throw d.err(
      `failed to parse storage_clean_interval, must be a duration or 'off' ${(e as Error).message}`,
    );
  }
}

/**
 * `default_bind <addresses...> [{ protocols ... }]` (also the `bind` directive's syntax).
 * With no address, `default_bind` binds every interface (as current Caddy; 2.6.2 refused it).
 * A port in an address is not used — the listener's port comes from the site address, as in
 * Caddy — so it is reported through `warn` rather than dropped unseen.
 */
export function parseBindArgs(
  d: Dispenser,
  defaultAll: boolean,
  warn?: (w: AdapterWarning) => void,
): BindValue {
  d.next();
  const tokens = d.remainingArgsAsTokens();
  const addresses = tokens.map((t) => t.text);
  if (addresses.length === 0 && defaultAll) addresses.push("");
  for (const t of tokens) {
    let port: string;
    try {
      port = splitNetworkAddress(t.text)[2];
    } catch {
      continue; // (a malformed address is refused with the listener it would make)
    }
    if (port === "") continue;
    warn?.({
      file: t.file,
      line: t.line,
      message: `${
        d.tokens[0]?.text
      } address ${t.text}: the port ${port} is not used; a listener's port comes from the site address (put :${port} there)`,
    });
  }
  let protocols: string[] = [];
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "protocols") {
      throw d.err(`unknown subdirective: ${d.val()}${didYouMean(d.val(), ["protocols"])}`);
    }
    protocols = d.remainingArgs();
    if (protocols.length === 0) throw d.err("protocols requires one or more arguments");
  }
  return { addresses, protocols };
}

function optAdmin(d: Dispenser): Record<string, unknown> {
  d.next();
  const admin: Record<string, unknown> = {};
  if (d.nextArg()) {
    const listen = d.val();
    if (listen === "off") {
      admin.disabled = true;
      if (d.next()) throw d.err("No more option is allowed after turning off admin config");
    } else {
      admin.listen = listen;
      if (d.nextArg()) throw d.argErr();
    }
  }
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "enforce_origin":
        admin.enforce_origin = true;
        break;
      case "origins": {
        const o = d.remainingArgs();
        if (o.length > 0) admin.origins = o;
        else delete admin.origins;
        break;
      }
      default:
        throw d.err(
          `unrecognized parameter '${d.val()}'${
            didYouMean(d.val(), ["enforce_origin", "origins"])
          }`,
        );
    }
  }
  if (!admin.listen && !admin.disabled) admin.listen = "localhost:2019";
  return admin;
}

const AUTO_HTTPS = ["off", "disable_redirects", "disable_certs", "ignore_loaded_certs"];

function optAutoHTTPS(d: Dispenser): string[] {
  d.next();
  const vals = d.remainingArgs();
  if (vals.length === 0) throw d.argErr();
  for (const v of vals) {
    if (!AUTO_HTTPS.includes(v)) {
      throw d.err(
        `auto_https must be one of 'off', 'disable_redirects', 'disable_certs', or 'ignore_loaded_certs'${
          didYouMean(v, AUTO_HTTPS)
        }`,
      );
    }
  }
  return vals;
}

function optMetrics(d: Dispenser): Record<string, unknown> {
  d.next();
  const m: Record<string, unknown> = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "per_host":
        m.per_host = true;
        break;
      case "observe_catchall_hosts":
        m.observe_catchall_hosts = true;
        break;
      case "otlp":
        m.otlp = true;
        break;
      default:
        throw d.unknownSubdirective(
          ["per_host", "observe_catchall_hosts", "otlp"],
          "unrecognized servers option '%s'",
        );
    }
  }
  return m;
}

function optLog(d: Dispenser, existing: unknown, h: Parameters<typeof parseLog>[0]): ConfigValue[] {
  const names = new Set<string>();
  for (const v of (existing as ConfigValue[] | undefined) ?? []) {
    names.add((v.value as { name: string }).name);
  }
  return parseLog(h.withDispenser(d), names);
}

/** `events { on <event|*> <handler> ... }`: the events app (handlers are modules). */
function optEvents(d: Dispenser): { appName: string; appValue: unknown } {
  d.next();
  const subs: unknown[] = [];
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "on") throw d.argErr();
    if (!d.nextArg()) throw d.argErr();
    const event = d.val() === "*" ? "" : d.val();
    if (!d.nextArg()) throw d.argErr();
    const name = d.val();
    const handler = unmarshalModule(d, `events.handlers.${name}`) as Record<string, unknown>;
    subs.push({
      ...(event ? { events: [event] } : { events: [""] }),
      handlers: [{ ...handler, handler: name }],
    });
  }
  return { appName: "events", appValue: subs.length ? { subscriptions: subs } : {} };
}

/** `filesystem <name> <module> ...`: named file systems (the `caddy.filesystems` app). */
function optFilesystem(d: Dispenser, existing: unknown): { filesystems: unknown[] } {
  const fs = (existing as { filesystems: unknown[] } | undefined) ?? { filesystems: [] };
  const entry: Record<string, unknown> = {};
  while (d.next()) {
    const a = d.args(1);
    if (!a) throw d.argErr();
    if (a[0] !== "") entry.name = a[0];
    if (!d.nextArg()) throw d.argErr();
    const name = d.val();
    const backend = unmarshalModule(d, `caddy.fs.${name}`) as Record<string, unknown>;
    entry.file_system = { ...backend, backend: name };
  }
  fs.filesystems.push(entry);
  return fs;
}

/** Registers the general global options. */
export function registerGeneralOptions(): void {
  registerGlobalOption("debug", optTrue);
  registerGlobalOption("http_port", port);
  registerGlobalOption("https_port", port);
  registerGlobalOption("default_bind", (d, _, h) => [{
    class: "bind",
    value: parseBindArgs(d, true, (w) => h.ctx.warnings.push(w)),
  }]);
  registerGlobalOption("grace_period", optDuration);
  registerGlobalOption("shutdown_delay", optDuration);
  registerGlobalOption("order", optOrder);
  registerGlobalOption("storage", optStorage);
  registerGlobalOption("storage_check", optOffOnly("storage_check"));
  registerGlobalOption("storage_clean_interval", optStorageCleanInterval);
  registerGlobalOption("admin", optAdmin);
  registerGlobalOption("auto_https", optAutoHTTPS);
  registerGlobalOption("metrics", optMetrics);
  registerGlobalOption("servers", (d) => parseServerOptions(d));
  registerGlobalOption("log", optLog);
  registerGlobalOption("persist_config", optOffOnly("persist_config"));
  registerGlobalOption("events", optEvents);
  registerGlobalOption("filesystem", optFilesystem);
}
