/**
 * `gatehouse reverse-proxy`: a simple reverse proxy from `--from` to one or more `--to`
 * upstreams (port ranges expand to several), with `--header-up`/`--header-down`,
 * `--change-host-header` (Host becomes the upstream address) and `--insecure` (no upstream
 * certificate verification). The admin API is disabled.
 *
 * @module
 */
import { type Command, defineCommand } from "./command.ts";
import { debugLogging, NO_ADMIN, parseHeaderFlags, runQuickServer } from "./quick_server.ts";
import { UsageError } from "./usage_error.ts";
import type {
  ProxyHeadersConfig,
  ReverseProxyConfig,
} from "../server/http/handlers/reverse_proxy/config.ts";
import { WORKERS_FLAG } from "./workers.ts";

/** A parsed `--from`/`--to` address. */
export interface ProxyAddress {
  scheme: "http" | "https";
  host: string;
  ports: number[];
}

/**
 * Parses a proxy address: `http://host:port`, `host:port`, `:port`, `host` (port ranges
 * allowed). `defaultScheme` applies when no scheme is given: https for a `--from` hostname.
 *
 * @example
 * ```ts
 * import { parseProxyAddress } from "./reverse_proxy.ts";
 * parseProxyAddress("localhost:9000-9001", "http").ports; // [9000, 9001]
 * ```
 */
export function parseProxyAddress(input: string, defaultScheme: "http" | "https"): ProxyAddress {
  let rest = input.trim();
  let scheme: "http" | "https" | null = null;
  const m = /^(https?):\/\//i.exec(rest);
  if (m) {
    scheme = m[1].toLowerCase() as "http" | "https";
    rest = rest.slice(m[0].length);
  }
  rest = rest.replace(/\/.*$/, "");
  const hp = /^(\[[^\]]+\]|[^:]*)(?::(\d+)(?:-(\d+))?)?$/.exec(rest);
  if (!hp) throw new UsageError(`invalid address: ${input}`);
  const host = hp[1];
  if (!scheme) {
    // --from (Caddy's rule): HTTP on port 80 or without a host, HTTPS otherwise, so
    // `localhost:8443` is HTTPS. --to: HTTP unless the port is 443.
    if (defaultScheme === "https") scheme = hp[2] === "80" || !host ? "http" : "https";
    else scheme = hp[2] === "443" ? "https" : "http";
  }
  const start = hp[2] ? Number(hp[2]) : scheme === "https" ? 443 : 80;
  const end = hp[3] ? Number(hp[3]) : start;
  if (end < start) throw new UsageError(`invalid port range: ${input}`);
  const ports: number[] = [];
  for (let p = start; p <= end; p++) ports.push(p);
  return { scheme, host, ports };
}

/** The dial addresses of `--to` values (port ranges expanded) and whether any is HTTPS. */
function upstreamDials(to: string[]): { dials: string[]; tls: boolean } {
  const dials: string[] = [];
  let tls = false;
  for (const t of to) {
    const a = parseProxyAddress(t, "http");
    if (a.scheme === "https") tls = true;
    for (const p of a.ports) dials.push(`${a.host || "localhost"}:${p}`);
  }
  return { dials, tls };
}

/** Options of the generated proxy config. */
export interface ReverseProxyOptions {
  from: string;
  to: string[];
  headerUp: Record<string, string[]>;
  headerDown: Record<string, string[]>;
  changeHostHeader: boolean;
  insecure: boolean;
  accessLog: boolean;
  debug: boolean;
  disableRedirects: boolean;
  /** Certificates from the local CA (`internal` issuer) for the --from host, whatever it is. */
  internalCerts?: boolean;
}

/** Builds the config `reverse-proxy` runs. */
export function reverseProxyConfig(o: ReverseProxyOptions): Record<string, unknown> {
  if (o.to.length === 0) throw new UsageError("reverse-proxy: --to is required");
  const from = parseProxyAddress(o.from || "localhost", "https");
  const { dials, tls: upstreamTLS } = upstreamDials(o.to);
  const upstreams = dials.map((dial) => ({ dial }));
  const up = { ...o.headerUp };
  if (o.changeHostHeader) up.Host = ["{http.reverse_proxy.upstream.hostport}"];
  const handler: ReverseProxyConfig = { handler: "reverse_proxy", upstreams };
  const headers: ProxyHeadersConfig = {};
  if (Object.keys(up).length) headers.request = { set: up };
  if (Object.keys(o.headerDown).length) headers.response = { set: o.headerDown };
  if (Object.keys(headers).length) handler.headers = headers;
  if (upstreamTLS || o.insecure) {
    handler.transport = { protocol: "http", tls: o.insecure ? { insecure_skip_verify: true } : {} };
  }
  const route: Record<string, unknown> = { handle: [handler] };
  if (from.host) {
    route.match = [{ host: [from.host] }];
  }
  const server: Record<string, unknown> = {
    listen: [`:${from.ports[0]}`],
    routes: [route],
  };
  if (from.scheme === "http") server.automatic_https = { disable: true };
  else if (o.disableRedirects) server.automatic_https = { disable_redirects: true };
  if (o.accessLog) server.logs = {};
  const apps: Record<string, unknown> = { http: { servers: { proxy: server } } };
  if (o.internalCerts && from.host) {
    apps.tls = {
      automation: { policies: [{ subjects: [from.host], issuers: [{ module: "internal" }] }] },
    };
  }
  return { ...NO_ADMIN, apps, ...debugLogging(o.debug) };
}

/**
 * What `reverse-proxy` prints once it serves, as Caddy: one `Gatehouse proxying <from> -> <to>`
 * line per upstream, then the load-balancing policy when there are several.
 *
 * @example
 * ```ts
 * import { proxyBanner, reverseProxyConfig } from "./reverse_proxy.ts";
 * proxyBanner(reverseProxyConfig({
 *   from: ":8080", to: ["127.0.0.1:9000"], headerUp: {}, headerDown: {},
 *   changeHostHeader: false, insecure: false, accessLog: false, debug: false,
 *   disableRedirects: false,
 * })); // "Gatehouse proxying http://:8080 -> 127.0.0.1:9000"
 * ```
 */
export function proxyBanner(o: ReverseProxyOptions): string {
  const from = parseProxyAddress(o.from || "localhost", "https");
  const shown = `${from.scheme}://${from.host}:${from.ports[0]}`;
  const to = upstreamDials(o.to).dials;
  const lines = to.map((dial) => `Gatehouse proxying ${shown} -> ${dial}`);
  if (to.length > 1) lines.push("Load balancing policy: random");
  return lines.join("\n");
}

/** `reverse-proxy`. */
export const reverseProxyCommand: Command = defineCommand({
  name: "reverse-proxy",
  usage:
    '[--from <addr>] [--to <addr>] [--change-host-header] [--insecure] [--internal-certs] [--disable-redirects] [--header-up "Field: value"] [--header-down "Field: value"] [--access-log] [--debug] [--workers <n>]',
  short: "A quick and production-ready reverse proxy",
  long: [
    "Proxies --from (default localhost) to every --to upstream (repeatable; port ranges expand;",
    "plain HTTP unless https:// is given). --from is HTTPS when it has a host and is not port",
    "80 (localhost:8443 is HTTPS), with a certificate from the local CA for localhost, IPs and",
    "internal names; --internal-certs uses the local CA for any host; --disable-redirects does",
    "not listen on the HTTP port for redirects. --change-host-header sets Host to the upstream",
    "address; --insecure skips upstream certificate checks. The admin API is disabled.",
  ].join("\n"),
  flags: [
    {
      name: "from",
      short: "f",
      type: "string",
      value: "<addr>",
      help: "Address on which to receive traffic",
      default: "localhost",
    },
    {
      name: "to",
      short: "t",
      type: "string",
      multiple: true,
      value: "<addr>",
      help: "Upstream address(es) to proxy to (repeatable)",
    },
    {
      name: "header-up",
      short: "H",
      type: "string",
      multiple: true,
      value: '"Field: value"',
      help: "Set a request header to send upstream",
    },
    {
      name: "header-down",
      short: "d",
      type: "string",
      multiple: true,
      value: '"Field: value"',
      help: "Set a response header to send downstream",
    },
    {
      name: "change-host-header",
      short: "c",
      type: "boolean",
      help: "Set the Host header to the upstream address",
    },
    {
      name: "disable-redirects",
      short: "r",
      type: "boolean",
      help: "Disable HTTP->HTTPS redirects",
    },
    {
      name: "internal-certs",
      short: "i",
      type: "boolean",
      help: "Use the internal CA for certificates",
    },
    { name: "debug", short: "v", type: "boolean", help: "Enable verbose debug logs" },
    { name: "access-log", type: "boolean", help: "Enable the access log" },
    WORKERS_FLAG,
    {
      name: "insecure",
      type: "boolean",
      help: "Disable TLS verification of upstreams (WARNING: insecure)",
    },
  ],
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`reverse-proxy: unexpected argument "${args[0]}"`);
    const options: ReverseProxyOptions = {
      from: String(flags.from ?? "localhost"),
      to: flags.to ?? [],
      headerUp: parseHeaderFlags(flags["header-up"] ?? [], "header-up"),
      headerDown: parseHeaderFlags(
        flags["header-down"] ?? [],
        "header-down",
      ),
      changeHostHeader: !!flags["change-host-header"],
      insecure: !!flags.insecure,
      accessLog: !!flags["access-log"],
      debug: !!flags.debug,
      disableRedirects: !!flags["disable-redirects"],
      internalCerts: !!flags["internal-certs"],
    };
    const config = reverseProxyConfig(options);
    return await runQuickServer(
      config,
      () => console.log(proxyBanner(options)),
      flags,
      "reverse-proxy",
    );
  },
});
