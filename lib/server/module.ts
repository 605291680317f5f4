/**
 * The contract between the config engine and every module of the web server.
 *
 * A module is identified by a Caddy-style id: a dotted namespace plus a name, e.g.
 * `http.handlers.static_response` (namespace `http.handlers`, name `static_response`).
 * Apps live in the empty namespace (`http`, `pki`, `tls`). A module definition turns its
 * raw JSON config into a live instance (`create` = Caddy's decode + Provision), may check
 * the result (`validate`), and releases what it holds in `cleanup` when a config is
 * replaced or unloaded.
 *
 * @module
 */

/** Levels of the logging pipeline, lowest first. */
export type LogLevel = "DEBUG" | "INFO" | "WARN" | "ERROR" | "PANIC" | "FATAL";

/** Typed fields attached to one log message. */
export type LogFields = Record<string, unknown>;

/** A named logger; messages go through every log of the logging pipeline that accepts them. */
export interface Logger {
  /** The logger's name, e.g. `http.log.access.srv0` or `admin.api`. */
  readonly name: string;
  /** Emits a DEBUG message. */
  debug(msg: string, fields?: LogFields): void;
  /** Emits an INFO message. */
  info(msg: string, fields?: LogFields): void;
  /** Emits a WARN message. */
  warn(msg: string, fields?: LogFields): void;
  /** Emits an ERROR message. */
  error(msg: string, fields?: LogFields): void;
  /** A child logger named `<name>.<sub>`. */
  named(sub: string): Logger;
  /** True when some log would accept a message of this level from this logger. */
  enabled(level: LogLevel): boolean;
}

/** Something that must be released when the config that created it goes away. */
export interface Cleanup {
  /** Releases resources (timers, sockets, files). Must be safe to call once. */
  cleanup?(): void | Promise<void>;
}

/** A provisioned module instance. */
export interface ModuleInstance extends Cleanup {
  /** Optional check run after every module of the config is provisioned. Throws on error. */
  validate?(): void | Promise<void>;
}

/** An app: a top-level module under `apps` that runs (e.g. `http`). */
export interface App extends ModuleInstance {
  /** Starts serving. Called only after the whole new config provisioned and validated. */
  start(): void | Promise<void>;
  /** Stops serving. Called on the old config after the new one started (or on unload/exit). */
  stop(): void | Promise<void>;
}

/** The per-request or per-connection handler a listener dispatches to. */
export type ConnHandler = (request: Request, info: ServeInfo) => Response | Promise<Response>;

/** What a listener knows about one request's connection. */
export interface ServeInfo {
  /** Remote address: `{hostname, port}` for TCP, `{path}` for unix sockets. */
  remoteAddr: { transport: "tcp"; hostname: string; port: number } | {
    transport: "unix";
    path: string;
  };
  /** TLS state when the listener terminates TLS, else undefined. */
  tls?: {
    serverName?: string;
    version?: number;
    cipherSuite?: number;
    proto?: string;
    resumed?: boolean;
    /** The certificates the client sent (leaf first, DER), when it was asked for them. */
    clientCertificates?: Uint8Array[];
  };
  /** The local address the request arrived on, as a listen address string. */
  localAddress: string;
  /** Marks the request for the upgraded connection API (WebSocket); see Deno.upgradeWebSocket. */
  completed?: Promise<void>;
  /** True for a request that came over HTTP/2 (h2 or h2c), where the listener knows it (node engine). */
  http2?: boolean;
  /**
   * HTTP/2 server push on this request's stream (node engine, HTTP/2, while the client accepts
   * pushes; absent otherwise and on pushed requests): sends a PUSH_PROMISE for a `GET` or
   * `HEAD` of `path` (an absolute path on the request's own origin, query included) with
   * `headers`, then serves that request through the listener's handler on the promised
   * stream. Resolves once the promise is sent; rejects when it cannot be (the client turned
   * push off, the stream is gone, too many streams open).
   */
  push?(method: "GET" | "HEAD", path: string, headers: Headers): Promise<void>;
  /**
   * Set for an HTTP/1.1 request with `Connection: Upgrade` on a `listener_engine: "node"`
   * listener: the connection can be taken over for any protocol (WebSocket, h2c, SPDY...).
   * A handler that calls `accept` answers with that, and the Response it returns is not sent.
   */
  upgrade?: RawUpgrade;
}

/** Bytes both ways over a connection that left HTTP (an accepted upgrade, an upstream tunnel). */
export interface Tunnel {
  /** Bytes from the peer; ends when the peer stops sending. */
  readonly readable: ReadableStream<Uint8Array>;
  /** Bytes to the peer; closing it ends the sending side only (half close). */
  readonly writable: WritableStream<Uint8Array>;
  /** Closes the connection both ways at once. */
  close(): void;
}

/** The connection of an upgrade request, for a handler to take over. */
export interface RawUpgrade {
  /** Whether `accept` was called. */
  readonly accepted: boolean;
  /** Status and header fields `accept` sent (for the access log). */
  readonly sent?: { status: number; headers: [string, string][] };
  /**
   * Writes the response head (`101 Switching Protocols` and `headers`) on the connection and
   * hands it over: the tunnel's `readable` starts with any bytes the client sent after its
   * request head.
   */
  accept(status: number, headers: [string, string][]): Tunnel;
}

/** Options for a listener acquired from the engine's listener pool. */
export interface ListenOptions {
  /** Network address, Caddy form: `host:port`, `:port`, `unix//path`, `tcp/host:port`. */
  address: string;
  /**
   * When the listener terminates TLS: where each handshake gets its certificate (by server
   * name). Listeners are keyed by address + TLS; a reload swaps the getter on the same socket.
   */
  tls?: TlsCertificateSource;
  /**
   * The HTTP implementation behind the socket: `deno` (`Deno.serve`: HTTP/1.1 and HTTP/2, the
   * fastest) or `node` (`node:http`/`node:http2`: HTTP/1.1 and HTTP/2, raw upgrades, TLS
   * session details, server push). Listeners are keyed by address + engine.
   */
  engine?: "deno" | "node";
  /**
   * Connection options (timeouts, head limit, listener wrappers, TCP keep-alive, ALPN); the
   * defaults when absent. A socket shared across configs follows its newest handle's.
   */
  connection?: ConnectionOptions;
}

/** Where a TLS listener gets the certificate of each handshake (the `tls` app's getter). */
export interface TlsCertificateSource {
  /** The PEM certificate chain and key for a server name (`""`: no SNI), or null for none. */
  getCertificate(serverName: string): Promise<{ cert: string; key: string } | null>;
  /** Calls `fn` when certificates changed; returns an unsubscribe function. */
  subscribe(fn: () => void): () => void;
  /**
   * The one certificate given for every server name, when the answer cannot depend on the name
   * right now; null when it does (see `CertificateGetter.fixedCertificate` in `tls/cache.ts`).
   */
  fixedCertificate?(): Promise<{ cert: string; key: string } | null>;
  /** True when some connection policy authenticates clients (listeners then ask for certificates). */
  requestsClientCertificates?: boolean;
  /** The client certificate check for a connection with this SNI, null for none. */
  clientAuth?(serverName: string): ClientCertificateCheck | null;
}

/** A connection policy's client authentication, as a listener runs it. */
export interface ClientCertificateCheck {
  /** Accepts (null) or refuses (the reason) the certificates a client sent, leaf first (DER). */
  check(chain: Uint8Array[]): Promise<string | null>;
}

/**
 * A listener from the engine's pool. Listeners are reference-counted by address: when a new
 * config asks for an address the running config already listens on, it gets the same socket,
 * and at swap time `setHandler` switches it over, so no connection is refused or dropped.
 */
export interface ListenerHandle {
  /** The address this listener is bound to, with the real port when `:0` was asked. */
  readonly address: string;
  /** The bound port (TCP only). */
  readonly port?: number;
  /** Routes this listener's requests to `handler` from now on. */
  setHandler(handler: ConnHandler): void;
  /** Drops this config's reference; the socket closes when no config holds it. */
  release(): Promise<void>;
  /** True when no other config holds the socket (it closes on `release`). */
  closesOnRelease?(): boolean;
}

import type { ConnectionOptions } from "./listeners/options.ts";
export type { ConnectionOptions };

/** Key/value storage (the contract lives in `storage/mod.ts`). */
import type { Storage } from "./storage/mod.ts";
export type { Storage };

/** An admin API route that a module registers while provisioned (e.g. `/reverse_proxy/upstreams`). */
export interface AdminRoute {
  /** Path prefix, e.g. `/pki/ca/`. */
  pattern: string;
  /** Handles a request under the prefix. Throw an `AdminError` (see admin) for an error status. */
  handle(request: Request): Response | Promise<Response>;
}

/** What a module receives while it is provisioned. */
export interface ProvisionContext {
  /**
   * Loads a nested module whose name is the value of `inlineKey` inside `raw`
   * (Caddy's `inline_key`), e.g. `loadModule("http.handlers", "handler", {"handler":"static_response",...})`.
   * The module's cleanup is tied to the config being provisioned.
   */
  loadModule<T extends ModuleInstance>(
    namespace: string,
    inlineKey: string,
    raw: unknown,
  ): Promise<T>;
  /** Loads a module by explicit name (for map-shaped config such as matcher sets `{"host": [...]}`). */
  loadModuleByName<T extends ModuleInstance>(
    namespace: string,
    name: string,
    raw: unknown,
  ): Promise<T>;
  /** A logger; names usually derive from module ids. */
  logger(name: string): Logger;
  /** Another app of the same config, provisioned on demand (e.g. `tls` from `http`). */
  app<T extends App>(name: string): Promise<T | undefined>;
  /** Acquires a listener from the pool (see ListenerHandle). */
  listen(options: ListenOptions): Promise<ListenerHandle>;
  /** The configured storage. */
  storage: Storage;
  /** Registers an admin API route for as long as this config runs. */
  registerAdminRoute(route: AdminRoute): void;
  /** Registers a cleanup to run when this config is replaced or unloaded. */
  onCleanup(fn: () => void | Promise<void>): void;
  /** Aborted when the config being provisioned is discarded or stopped. */
  signal: AbortSignal;
  /**
   * True when the config is only being validated (`gatehouse validate`, `adapt --validate`):
   * modules check everything they can but bind no socket and start nothing (no timers, health
   * checks or exporters); `listen` then checks the address and returns an unbound handle.
   */
  readonly validating: boolean;
}

/** A module definition: a registry entry. */
export interface ModuleDefinition<T extends ModuleInstance = ModuleInstance> {
  /** The full module id, e.g. `http.handlers.static_response`. */
  id: string;
  /** Decodes and provisions an instance from its raw JSON config. Throw on invalid config. */
  create(config: Record<string, unknown>, ctx: ProvisionContext): T | Promise<T>;
}

/**
 * Where a registered module comes from: the package that provides it. Modules registered
 * without an origin are the standard ones, shipped in the gatehouse package itself.
 */
export interface ModuleOrigin {
  /** The package, as installed: e.g. `npm:gatehouse-plugin-greet` or `jsr:@acme/gatehouse`. */
  package: string;
  /** The package's version, e.g. `1.0.0` (empty when unknown). */
  version: string;
}

const registry = new Map<string, ModuleDefinition>();
const origins = new Map<string, ModuleOrigin>();

const MODULE_ID = /^([a-z0-9_]+(\.[a-z0-9_]+)*)$/;

/**
 * Registers a module so configs can use it. Throws when the id is taken. `origin` names the
 * package that provides it (plugin packages); standard modules have none.
 *
 * @example
 * ```ts
 * import { registerModule } from "./module.ts";
 * registerModule({
 *   id: "http.handlers.hello",
 *   create: () => ({ serveHTTP: () => new Response("hello") }),
 * });
 * ```
 */
export function registerModule<T extends ModuleInstance>(
  definition: ModuleDefinition<T>,
  origin?: ModuleOrigin,
): void {
  registerModules([definition as unknown as ModuleDefinition], origin);
}

/**
 * Registers several modules at once, all or none: when one id is invalid, taken, or listed
 * twice, it throws and registers nothing (how plugin packages are loaded).
 *
 * @example
 * ```ts
 * import { registerModules } from "./module.ts";
 * registerModules([
 *   { id: "http.handlers.hi", create: () => ({ serveHTTP: () => new Response("hi") }) },
 * ], { package: "npm:gatehouse-plugin-hi", version: "1.0.0" });
 * ```
 */
export function registerModules(definitions: ModuleDefinition[], origin?: ModuleOrigin): void {
  const ids = new Set<string>();
  for (const definition of definitions) {
    if (typeof definition?.id !== "string" || !MODULE_ID.test(definition.id)) {
      throw new TypeError(`invalid module id: ${JSON.stringify(definition?.id)}`);
    }
    if (typeof definition.create !== "function") {
      throw new TypeError(`module ${definition.id}: create must be a function`);
    }
    if (registry.has(definition.id) || ids.has(definition.id)) {
      const by = origins.get(definition.id);
      throw new Error(
        `module already registered: ${definition.id}` +
          (registry.has(definition.id) ? ` (by ${by ? by.package : "gatehouse"})` : ""),
      );
    }
    ids.add(definition.id);
  }
  for (const definition of definitions) {
    registry.set(definition.id, definition);
    if (origin) origins.set(definition.id, { ...origin });
  }
}

/**
 * A module whose code loads when a config first uses it: a server carries only the modules
 * its config names (each unused one would cost start-up time and memory).
 *
 * @example
 * ```ts
 * import { lazyModule, registerModule } from "./module.ts";
 * registerModule(lazyModule("http.handlers.hello", async () => ({
 *   id: "http.handlers.hello",
 *   create: () => ({ serveHTTP: () => new Response("hello") }),
 * })));
 * ```
 */
export function lazyModule(id: string, load: () => Promise<ModuleDefinition>): ModuleDefinition {
  let loading: Promise<ModuleDefinition> | undefined;
  return {
    id,
    async create(config, ctx) {
      const def = await (loading ??= load());
      if (def.id !== id) throw new Error(`module ${id} loaded as ${def.id}`);
      return await def.create(config, ctx);
    },
  };
}

/**
 * Looks up a module definition by id.
 *
 * @example
 * ```ts
 * import { getModule } from "./module.ts";
 * getModule("http.handlers.static_response")?.id;
 * ```
 */
export function getModule(id: string): ModuleDefinition | undefined {
  return registry.get(id);
}

/**
 * The package a registered module comes from, or undefined for a standard module (and for an
 * id nothing registered).
 *
 * @example
 * ```ts
 * import { moduleOrigin } from "./module.ts";
 * moduleOrigin("http.handlers.static_response"); // undefined: standard
 * ```
 */
export function moduleOrigin(id: string): ModuleOrigin | undefined {
  const origin = origins.get(id);
  return origin ? { ...origin } : undefined;
}

/**
 * Lists the ids of all registered modules, sorted.
 *
 * @example
 * ```ts
 * import { listModules } from "./module.ts";
 * console.log(listModules().join("\n"));
 * ```
 */
export function listModules(): string[] {
  return [...registry.keys()].sort();
}
