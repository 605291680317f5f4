/**
 * The `servers [<listener>] { ... }` global option: per-server settings (timeouts, protocols,
 * trusted proxies, name, ...) applied to the servers whose listeners match.
 *
 * @module
 */
import { didYouMean, type Dispenser, siteError, type Where } from "../../caddyfile/dispenser.ts";
import { unmarshalModule } from "../../caddyfile/registry.ts";
import type { ServerJSON } from "./server_json.ts";
import { parseSize } from "../../caddyfile/values.ts";

/** One `servers` option block. */
export interface ServerOptions {
  /** Applies to servers listening on exactly this address ("" = all others). */
  listenerAddress: string;
  /** Rename the server. */
  name: string;
  /** Server JSON fields to set. */
  fields: Record<string, unknown>;
  /** `log_credentials`. */
  logCredentials: boolean;
  /** `trace`. */
  trace: boolean;
  /** Where the option is written (the `servers` token). */
  where?: Where;
  /** Where the `name` is written. */
  nameWhere?: Where;
}

const OPTIONS = [
  "name",
  "listener_wrappers",
  "packet_conn_wrappers",
  "timeouts",
  "keepalive_interval",
  "keepalive_idle",
  "keepalive_count",
  "max_header_size",
  "enable_full_duplex",
  "expected_underscore_headers",
  "expected_dot_headers",
  "log_credentials",
  "protocols",
  "strict_sni_host",
  "trusted_proxies",
  "trusted_proxies_strict",
  "trusted_proxies_unix",
  "client_ip_headers",
  "metrics",
  "trace",
  "0rtt",
];
const TIMEOUTS = [
  "read_body",
  "read_body_idle",
  "read_header",
  "write",
  "write_idle",
  "write_max_chunk",
  "idle",
];

function duration(d: Dispenser, what: string, s: string): number {
  return d.duration((_, reason) => `parsing ${what}: ${reason}`, s);
}

function int(d: Dispenser, what: string, s: string): number {
  if (!/^[+-]?\d+$/.test(s)) {
    throw d.err(`parsing ${what}: strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  return Number(s);
}

function set(o: Record<string, unknown>, k: string, v: unknown): void {
  if (v === 0 || v === false || v === "" || v === undefined) delete o[k];
  else o[k] = v;
}

/** Parses one `servers` option. */
export function parseServerOptions(d: Dispenser): ServerOptions {
  d.next();
  const opts: ServerOptions = {
    listenerAddress: "",
    name: "",
    fields: {},
    logCredentials: false,
    trace: false,
    where: d.token(),
  };
  const f = opts.fields;
  if (d.nextArg()) {
    opts.listenerAddress = d.val();
    if (d.nextArg()) throw d.argErr();
  }
  for (const n = d.nesting(); d.nextBlock(n);) {
    const opt = d.val();
    switch (opt) {
      case "name":
        if (opts.listenerAddress === "") {
          throw d.err("cannot set a name for a server without a listener address");
        }
        if (!d.nextArg()) throw d.argErr();
        opts.name = d.val();
        opts.nameWhere = d.token();
        break;
      case "listener_wrappers":
      case "packet_conn_wrappers": {
        const ns = opt === "listener_wrappers" ? "caddy.listeners" : "caddy.packetconns";
        const list: unknown[] = [];
        for (const m = d.nesting(); d.nextBlock(m);) {
          const name = d.val();
          const w = unmarshalModule(d, `${ns}.${name}`) as Record<string, unknown>;
          list.push({ ...w, wrapper: name });
        }
        set(f, opt, list.length > 0 ? list : undefined);
        break;
      }
      case "timeouts":
        for (const m = d.nesting(); d.nextBlock(m);) {
          const t = d.val();
          switch (t) {
            case "read_body":
            case "read_header":
            case "write":
            case "idle": {
              if (!d.nextArg()) throw d.argErr();
              const key = {
                read_body: "read_timeout",
                read_header: "read_header_timeout",
                write: "write_timeout",
                idle: "idle_timeout",
              }[t];
              set(f, key, duration(d, `${t} timeout duration`, d.val()));
              break;
            }
            case "read_body_idle":
            case "write_idle": {
              const args = d.remainingArgs();
              if (args.length < 1 || args.length > 2) throw d.argErr();
              const pre = t === "read_body_idle" ? "read" : "write";
              set(f, `${pre}_idle_timeout`, duration(d, `${t} timeout duration`, args[0]));
              if (args.length === 2) {
                set(f, `${pre}_min_rate`, int(d, `${t} min_rate bytes/second`, args[1]));
              }
              break;
            }
            case "write_max_chunk": {
              const a = d.allArgs(1);
              if (!a) throw d.argErr();
              try {
                set(f, "max_write_chunk", parseSize(a[0]));
              } catch (e) {
                throw d.err(`parsing write_max_chunk: ${(e as Error).message}`);
              }
              break;
            }
            default:
              throw d.err(`unrecognized timeouts option '${t}'${didYouMean(t, TIMEOUTS)}`);
          }
        }
        break;
      case "keepalive_interval":
      case "keepalive_idle":
        if (!d.nextArg()) throw d.argErr();
        set(f, opt, duration(d, `keepalive ${opt.slice(10)} duration`, d.val()));
        break;
      case "keepalive_count":
        if (!d.nextArg()) throw d.argErr();
        set(f, opt, int(d, "keepalive count int", d.val()));
        break;
      case "max_header_size": {
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        try {
          set(f, "max_header_bytes", parseSize(a[0]));
        } catch (e) {
          throw d.err(`parsing max_header_size: ${(e as Error).message}`);
        }
        break;
      }
      case "enable_full_duplex":
      case "trusted_proxies_unix":
        if (d.nextArg()) throw d.argErr();
        f[opt] = true;
        break;
      case "trusted_proxies_strict":
        if (d.nextArg()) throw d.argErr();
        f[opt] = 1;
        break;
      case "log_credentials":
        if (d.nextArg()) throw d.argErr();
        opts.logCredentials = true;
        break;
      case "trace":
        if (d.nextArg()) throw d.argErr();
        opts.trace = true;
        break;
      case "expected_underscore_headers":
      case "expected_dot_headers": {
        const args = d.remainingArgs();
        if (args.length === 0) throw d.argErr();
        f[opt] = args;
        break;
      }
      case "protocols": {
        const list = (f.protocols as string[] | undefined) ?? [];
        for (const p of d.remainingArgs()) {
          if (!["h1", "h2", "h2c", "h3"].includes(p)) {
            throw d.err(
              `unknown protocol '${p}': expected h1, h2, h2c, or h3${
                didYouMean(p, ["h1", "h2", "h2c", "h3"])
              }`,
            );
          }
          if (list.includes(p)) throw d.err(`protocol ${p} specified more than once`);
          list.push(p);
        }
        set(f, "protocols", list.length > 0 ? list : undefined);
        if (d.nextBlock(d.nesting())) throw d.argErr();
        break;
      }
      case "strict_sni_host": {
        if (d.nextArg() && d.val() !== "insecure_off" && d.val() !== "on") {
          throw d.err(`strict_sni_host only supports 'on' or 'insecure_off', got '${d.val()}'`);
        }
        f.strict_sni_host = d.val() !== "insecure_off";
        break;
      }
      case "trusted_proxies": {
        if (!d.nextArg()) {
          throw d.err(
            "trusted_proxies expects an IP range source module name as its first argument",
          );
        }
        const name = d.val();
        const src = unmarshalModule(d, `http.ip_sources.${name}`) as Record<string, unknown>;
        f.trusted_proxies = { ...src, source: name };
        break;
      }
      case "client_ip_headers": {
        const list = (f.client_ip_headers as string[] | undefined) ?? [];
        for (const hdr of d.remainingArgs()) {
          if (list.includes(hdr)) throw d.err(`client IP header ${hdr} specified more than once`);
          list.push(hdr);
        }
        set(f, "client_ip_headers", list.length > 0 ? list : undefined);
        if (d.nextBlock(d.nesting())) throw d.argErr();
        break;
      }
      case "metrics": {
        const m: Record<string, unknown> = {};
        for (const k = d.nesting(); d.nextBlock(k);) {
          if (d.val() !== "per_host") {
            throw d.unknownSubdirective(["per_host"], "unrecognized metrics option '%s'");
          }
          m.per_host = true;
        }
        f.metrics = m;
        break;
      }
      case "0rtt":
        if (!d.nextArg()) throw d.argErr();
        if (d.val() !== "off") {
          throw d.err(`unsupported 0rtt argument '${d.val()}' (only 'off' is supported)`);
        }
        f.allow_0rtt = false;
        break;
      default:
        throw d.err(`unrecognized servers option '${opt}'${didYouMean(opt, OPTIONS)}`);
    }
  }
  return opts;
}

const APPLIED = [
  "listener_wrappers",
  "packet_conn_wrappers",
  "read_timeout",
  "read_header_timeout",
  "read_idle_timeout",
  "read_min_rate",
  "write_timeout",
  "write_idle_timeout",
  "write_min_rate",
  "max_write_chunk",
  "idle_timeout",
  "keepalive_interval",
  "keepalive_idle",
  "keepalive_count",
  "max_header_bytes",
  "enable_full_duplex",
  "expected_underscore_headers",
  "expected_dot_headers",
  "protocols",
  "strict_sni_host",
  "trusted_proxies",
  "client_ip_headers",
  "trusted_proxies_strict",
  "trusted_proxies_unix",
  "metrics",
  "allow_0rtt",
];

/** Applies the `servers` options to the servers they match, then renames servers. */
export function applyServerOptions(
  servers: Record<string, ServerJSON>,
  options: Map<string, unknown>,
): void {
  const all = options.get("servers") as ServerOptions[] | undefined;
  if (!all) return;
  const names = new Map<string, ServerOptions>();
  for (const o of all) {
    if (o.name === "") continue;
    const first = names.get(o.name);
    if (first) {
      const message = `cannot use duplicate server name '${o.name}'`;
      // (the options are sorted by listener: name the one written last)
      const later = (first.nameWhere?.line ?? 0) > (o.nameWhere?.line ?? 0) ? first : o;
      throw later.nameWhere ? siteError(later.nameWhere, message) : new Error(message);
    }
    names.set(o.name, o);
  }
  const renames: [string, string][] = [];
  for (const [key, srv] of Object.entries(servers)) {
    const o = all.find((s) =>
      s.listenerAddress === "" || (srv.listen ?? []).includes(s.listenerAddress)
    );
    if (!o) continue;
    for (const k of APPLIED) {
      if (o.fields[k] !== undefined) srv[k] = o.fields[k];
      else delete srv[k];
    }
    if (o.logCredentials) (srv.logs ??= {}).should_log_credentials = true;
    if (o.trace) (srv.logs ??= {}).trace = true;
    if (o.name !== "") renames.push([key, o.name]);
  }
  for (const [from, to] of renames) {
    const s = servers[from];
    delete servers[from];
    servers[to] = s;
  }
}
