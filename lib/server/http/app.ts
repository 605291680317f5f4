/**
 * The `http` app: `apps.http` with `servers`, `http_port`, `https_port`, `grace_period`.
 * Provisioning builds every server and acquires its listeners from the engine's pool (so a
 * bad address fails the load and the old config keeps running); `start` points the listeners
 * at the new servers, `stop` releases this config's references.
 *
 * @module
 */
import { withClientAuth } from "../tls/client_auth/policies.ts";
import type { ModuleDefinition, ProvisionContext } from "../module/mod.ts";
import type { ConnectionOptions, ListenerHandle } from "../module/listener.ts";
import type { App, Logger } from "../module/instance.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import { HttpServer } from "./server.ts";
import { ConfigError } from "../config/error.ts";
import type { TlsApp } from "../tls/app.ts";
import { setChallengePorts } from "../tls/acme/ports.ts";
import { planAutomaticHttps } from "./autohttps.ts";
import { type HttpInstrumentation, httpInstrumentationFactory } from "./instrumentation.ts";
import { cleartextHttp2 } from "./server_options.ts";

/** `apps.http` (Caddy's `caddyhttp.App`, `modules/caddyhttp/app.go`). */
export type HttpAppConfig = {
  /** The port of plain HTTP (80): automatic HTTPS redirects from it, and a listen address without a port uses it. */
  http_port?: number;
  /** The port of HTTPS (443): a server listening only there gets TLS. */
  https_port?: number;
  /** How long a stop waits for requests in flight (a duration; unset: without limit). */
  grace_period?: number | string;
  /** How long servers go on serving, with `{http.shutting_down}` set, once a stop begins. */
  shutdown_delay?: number | string;
  /** The servers by name (each decoded by {@linkcode HttpServer.create}). */
  servers?: Record<string, Raw>;
  /** Request metrics (`http_request_*`), when the metrics module is in the build. */
  metrics?: Raw;
};

/** The fields of {@linkcode HttpAppConfig}. */
export const HTTP_APP_FIELDS: readonly (keyof HttpAppConfig)[] = [
  "http_port",
  "https_port",
  "grace_period",
  "shutdown_delay",
  "servers",
  "metrics",
];

const running = new Set<HttpApp>();

/**
 * The `http` apps started and not yet stopped (normally one): lets the quick-server commands
 * print the addresses they were given for `:0`.
 *
 * @example
 * ```ts
 * import { runningHttpApps } from "./app.ts";
 * for (const app of runningHttpApps()) console.log(app.listenAddresses());
 * ```
 */
export function runningHttpApps(): HttpApp[] {
  return [...running];
}

/** The running `http` app of one config. */
export class HttpApp implements App {
  /** Servers by name. */
  readonly servers: Map<string, HttpServer>;
  /** Default HTTP port. */
  readonly httpPort: number;
  /** Default HTTPS port. */
  readonly httpsPort: number;
  #handles: { server: HttpServer; handle: ListenerHandle }[];
  #released = false;
  #shutdownDelay = 0;
  #log?: Logger;

  private constructor(
    servers: Map<string, HttpServer>,
    httpPort: number,
    httpsPort: number,
    handles: { server: HttpServer; handle: ListenerHandle }[],
  ) {
    this.servers = servers;
    this.httpPort = httpPort;
    this.httpsPort = httpsPort;
    this.#handles = handles;
  }

  /** Decodes and provisions the app, acquiring listeners. */
  static async create(config: Raw, ctx: ProvisionContext): Promise<HttpApp> {
    const d = new Decoder(config, "http").fields(HTTP_APP_FIELDS);
    const httpPort = d.number("http_port") ?? 80;
    const httpsPort = d.number("https_port") ?? 443;
    // grace_period bounds the drain when the process stops (engine.shutdown reads it)
    d.duration("grace_period");
    const shutdownDelay = d.duration("shutdown_delay") ?? 0;
    const servers = new Map<string, HttpServer>();
    const rawServers = d.value("servers") === undefined
      ? {}
      : Decoder.of(d.value("servers"), d.at("servers")).raw;
    let tlsApp: TlsApp | undefined;
    let tlsAsked = false;
    const tls = async () => {
      if (!tlsAsked) {
        tlsApp = await ctx.app<TlsApp>("tls");
        tlsAsked = true;
      }
      return tlsApp;
    };
    const plan = await planAutomaticHttps(rawServers, {
      httpPort,
      httpsPort,
      log: ctx.logger("http"),
      tls,
    });
    const metrics = await instrumentation(d, rawServers, ctx);
    for (const [name, raw] of Object.entries(plan.servers)) {
      servers.set(name, await HttpServer.create(name, raw, ctx, httpPort, metrics));
    }
    if (plan.certNames.length) {
      const app = await tls();
      if (!app) throw new ConfigError("no_certificate", "automatic HTTPS needs the tls app");
      ctx.logger("http").info("enabling automatic TLS certificate management", {
        domains: plan.certNames,
      });
      await app.manage(plan.certNames);
    }
    const handles: { server: HttpServer; handle: ListenerHandle }[] = [];
    const app = new HttpApp(servers, httpPort, httpsPort, handles);
    app.#shutdownDelay = shutdownDelay;
    app.#log = ctx.logger("http");
    ctx.onCleanup(() => app.#release());
    for (const server of servers.values()) {
      const app = server.tlsPolicies ? await tls() : undefined;
      if (server.tlsPolicies) {
        const sd = new Decoder(plan.servers[server.name], `http.servers.${server.name}`);
        if (!app) throw sd.error("TLS needs the tls app", "no_certificate");
        if (app.cache.size === 0 && app.managedNames.length === 0 && !app.hasOnDemand) {
          // As Caddy: the config loads, and handshakes fail until certificates exist.
          ctx.logger("http").warn(
            "server has TLS connection policies but no certificate is loaded, managed or " +
              "obtained at handshake time; TLS handshakes will fail (load certificates with " +
              "apps.tls.certificates, or let automatic HTTPS manage the routes' hosts)",
            { server_name: server.name },
          );
        }
        for (const p of server.tlsPolicies) {
          for (const t of p.anyTag.concat(p.allTags)) {
            if (!app.cache.all().some((c) => c.tags.includes(t))) {
              sd.failAt(
                "tls_connection_policies",
                "no loaded certificate has the tags " +
                  JSON.stringify({ any_tag: p.anyTag, all_tags: p.allTags }),
                "no_certificate",
              );
            }
          }
        }
        const unix = server.addresses.find((a) => a.network === "unix");
        if (unix) {
          sd.fail(
            `TLS on unix socket listeners is not supported (${unix.address})`,
            "invalid_address",
          );
        }
      }
      const http3 = http3Refusal(server, app?.certificates.find((c) => c.version === 1)?.source);
      for (const [i, a] of server.addresses.entries()) {
        const host = a.network !== "tcp"
          ? ""
          : a.address.slice(0, a.address.lastIndexOf(":")).replace(/^\[|\]$/g, "");
        // as Caddy: a listener on the HTTP port speaks plain HTTP, even on a TLS server
        const onHttpPort = a.network === "tcp" &&
          Number(a.address.slice(a.address.lastIndexOf(":") + 1)) === httpPort;
        const source = app && server.tlsPolicies && !onHttpPort
          ? withClientAuth(
            app.getter(server.tlsPolicies, host, server.hostNames),
            server.clientAuth,
          )
          : undefined;
        const p = server.options.protocols[server.listenIndex[i]];
        if (a.network === "fdgram" && (!source || !p.h3)) {
          throw new ConfigError(
            "invalid_address",
            `http.servers.${server.name}: listen address ${a.address}: an inherited UDP socket ` +
              (source
                ? `serves HTTP/3 only, and its protocols leave out h3`
                : `serves HTTP/3, which needs TLS (this server has no TLS connection policies)`),
          );
        }
        let port: number | undefined;
        // TCP: h1/h2/h2c (a TLS listener of h3 alone has none; an fdgram/ address is UDP); h2
        // alone on a plain listener has nothing to serve there, as in Caddy
        const tcp = p.h1 || p.h2c || (!!source && p.h2);
        if (a.network !== "fdgram" && !tcp && !source) {
          ctx.logger("http").warn("HTTP/2 skipped because it requires TLS", {
            network: a.network,
            addr: a.address,
          });
        }
        if (a.network !== "fdgram" && tcp) {
          const handle = await ctx.listen({
            address: a.address,
            tls: source,
            engine: server.engine,
            connection: connectionOptions(server, i),
          });
          handles.push({ server, handle });
          server.listeners.push(handle);
          port = handle.port;
          if (refusesHttp2(server, i, !!source)) server.refuseHttp2(handle.address);
        }
        // UDP: h3 beside it on the same port (an fd/ address has no UDP socket, as in Caddy)
        if (source && p.h3 && a.network !== "fd" && a.network !== "unix") {
          if (http3 !== null) {
            if (server.options.protocolsGiven) {
              throw new ConfigError(
                "unsupported",
                `http.servers.${server.name}.protocols: "h3" cannot be served here: ${http3}`,
              );
            }
            continue;
          }
          const address = a.network === "fdgram"
            ? a.address
            : `udp/${a.address.slice(0, a.address.lastIndexOf(":"))}:${
              port ?? a.address.slice(a.address.lastIndexOf(":") + 1)
            }`;
          const handle = await ctx.listen({
            address,
            tls: source,
            names: server.hostNames,
            connection: connectionOptions(server, i),
          });
          handles.push({ server, handle });
          server.addHttp3(handle);
        }
      }
    }
    return app;
  }

  /** Points every listener at its server. */
  start(): void {
    for (const { server, handle } of this.#handles) handle.setHandler(server.handle);
    running.add(this);
    setChallengePorts({ http: this.httpPort, https: this.httpsPort });
  }

  /** Bound listen addresses by server name (the real port when `:0` was asked). */
  listenAddresses(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [name, s] of this.servers) out[name] = s.listeners.map((l) => l.address);
    return out;
  }

  /**
   * Releases this config's listener references. With `shutdown_delay`, when some listener
   * closes (no newer config keeps it), the servers first go on serving for that long, with
   * `{http.shutting_down}` and `{http.time_until_shutdown}` set (as Caddy).
   */
  async stop(): Promise<void> {
    const closing = this.#handles.filter(({ handle }) => handle.closesOnRelease?.());
    if (this.#shutdownDelay > 0 && closing.length && !this.#released) {
      const at = Date.now() + this.#shutdownDelay;
      for (const { server } of closing) server.shutdownAt = at;
      this.#log?.info("shutdown scheduled", {
        delay_duration: this.#shutdownDelay / 1000,
        time: at / 1000,
      });
      await new Promise((r) => setTimeout(r, this.#shutdownDelay));
    }
    await this.#release();
  }

  /** Releases listeners (idempotent). */
  async cleanup(): Promise<void> {
    await this.#release();
  }

  async #release(): Promise<void> {
    running.delete(this);
    if (this.#released) return;
    this.#released = true;
    await Promise.all(this.#handles.map(({ handle }) => handle.release()));
  }
}

/** The routes' instrumentation when the app (`app`) or a server has a `metrics` object. */
function instrumentation(
  app: Decoder,
  servers: Record<string, unknown>,
  ctx: ProvisionContext,
): Promise<HttpInstrumentation | undefined> {
  const appMetrics = app.value("metrics");
  const asked = (appMetrics !== undefined && appMetrics !== null) ||
    Object.values(servers).some((s) => {
      const m = (s as { metrics?: unknown } | null)?.metrics;
      return m !== undefined && m !== null;
    });
  if (!asked) return Promise.resolve(undefined);
  const make = httpInstrumentationFactory();
  if (!make) app.failAt("metrics", "metrics are not available in this build", "unsupported");
  return make(appMetrics, servers, ctx);
}

/** The connection options of a server's `i`-th expanded listen address. */
function connectionOptions(server: HttpServer, i: number): ConnectionOptions {
  const o = server.options;
  const p = o.protocols[server.listenIndex[i]];
  return {
    readTimeoutMs: o.readTimeoutMs,
    readHeaderTimeoutMs: o.readHeaderTimeoutMs,
    writeTimeoutMs: o.writeTimeoutMs,
    idleTimeoutMs: o.idleTimeoutMs,
    maxHeaderBytes: o.maxHeaderBytes,
    wrappers: o.wrappers,
    keepalive: o.keepalive,
    alpn: [...(p.h2 ? ["h2"] : []), ...(p.h1 ? ["http/1.1"] : [])],
    h2c: cleartextHttp2(p),
    ...(!cleartextHttp2(p) || p.h2c ? { h2cPreface: true } : {}),
    ...(p.h1 ? {} : { h1: false }),
    ...(o.upgrades ? { upgrades: true } : {}),
  };
}

/**
 * Why a TLS server cannot serve HTTP/3 here, or null when it can: Deno's QUIC endpoint needs
 * `--unstable-net`, it has no TLS client authentication (HTTP/3 there would let clients
 * past the connection policies that ask for certificates), and rustls refuses X.509 v1
 * certificates (`v1`: where the tls app loaded one, see `HttpServer.create`).
 */
function http3Refusal(server: HttpServer, v1: string | undefined): string | null {
  if (typeof (Deno as { QuicEndpoint?: unknown }).QuicEndpoint !== "function") {
    return "Deno's QUIC endpoint needs --unstable-net";
  }
  if (server.clientAuth) {
    return "the HTTP/3 listener cannot ask clients for certificates " +
      "(tls_connection_policies with client_authentication); remove h3 from protocols";
  }
  if (v1) {
    return `Deno's QUIC endpoint (rustls) refuses X.509 v1 certificates (UnsupportedCertVersion), ` +
      `which ${v1} is; remove h3 from protocols or load a v3 certificate`;
  }
  return null;
}

/** A deno-engine listener (TLS or not) whose protocols leave out the HTTP/2 Deno.serve speaks. */
function refusesHttp2(server: HttpServer, i: number, tls: boolean): boolean {
  if (server.engine !== "deno") return false; // node: speaks HTTP/2 only where listed
  const p = server.options.protocols[server.listenIndex[i]];
  return tls ? !p.h2 : !cleartextHttp2(p);
}

/** Registry entry of the `http` app. */
export const httpAppModule: ModuleDefinition<HttpApp> = {
  id: "http",
  create: (config, ctx) => HttpApp.create(config, ctx),
};
