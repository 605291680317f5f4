/**
 * The Gatehouse web server as a library: the module registry (so a program can add its own
 * handlers, matchers, apps, log writers...), config adapters, and a way to embed and run the
 * whole server (config engine, admin API, logging) inside a Deno program.
 *
 * @example
 * ```ts
 * import { startServer } from "@gatehouse/gatehouse/admin";
 * const server = await startServer({
 *   adminAddress: "127.0.0.1:2019",
 *   config: {
 *     apps: {
 *       http: {
 *         servers: {
 *           site: {
 *             listen: ["127.0.0.1:8080"],
 *             routes: [{ handle: [{ handler: "static_response", body: "hello" }] }],
 *           },
 *         },
 *       },
 *     },
 *   },
 * });
 * await server.stop();
 * ```
 *
 * @module
 */
export { type EmbeddedServer, startServer, type StartServerOptions } from "./lib/server/embed.ts";
export {
  guardInspectorSignal,
  ignoreInspectorSignal,
  INSPECTOR_ARMED_MS,
  type SignalGuard,
} from "./lib/inspector_signal.ts";
export { DEFAULT_ADMIN_ADDRESS, Engine, type EngineOptions } from "./lib/server/engine.ts";
export type { ChangeOptions, ConfigAuthority } from "./lib/server/admin/handler.ts";
export { AdminError, type AdminErrorCode } from "./lib/server/errors.ts";
export {
  adaptByContentType,
  type AdapterWarning,
  type AdaptResult,
  type ConfigAdapter,
  getAdapter,
  listAdapters,
  registerAdapter,
} from "./lib/server/adapter.ts";
export {
  type AdminRoute,
  getModule,
  listModules,
  type ModuleDefinition,
  type ModuleOrigin,
  moduleOrigin,
  type ProvisionContext,
  registerModule,
  registerModules,
} from "./lib/server/module/mod.ts";
export { type Storage } from "./lib/server/module/storage.ts";
export {
  type CertificateGetter,
  type CertifiedKey,
  type ClientCertificateCheck,
  type ConnectionOptions,
  type ConnHandler,
  type ListenerHandle,
  type ListenOptions,
  type RawUpgrade,
  type ServeInfo,
  type TlsCertificateSource,
  type Tunnel,
} from "./lib/server/module/listener.ts";
export {
  type App,
  type Cleanup,
  type LogFields,
  type Logger,
  type LogLevel,
  type ModuleInstance,
} from "./lib/server/module/instance.ts";
export type { KeyInfo, Locker } from "./lib/server/module/storage.ts";
export {
  accessTree,
  canonicalJson,
  type Json,
  type JsonObject,
  makeEtag,
  type TreeMethod,
} from "./lib/server/config_tree.ts";
export { ListenerPool, type SharedListening } from "./lib/server/listeners/pool.ts";
export {
  adapterOrigin,
  type GatehousePlugin,
  loadPlugin,
  PluginError,
  type PluginErrorCode,
  type PluginPackage,
} from "./lib/server/plugin.ts";
export type { DnsProvider, DnsRecord } from "./lib/server/tls/dns/provider.ts";
export type { HttpHandler, Next, RequestMatcher } from "./lib/server/http/handler.ts";
export type {
  ProxyFacts,
  RequestContext,
  ServerFacts,
  UpstreamResponseHandling,
} from "./lib/server/http/context.ts";
export type {
  ListenerWrapper,
  PeerAddress,
  PendingConnection,
  TcpKeepAlive,
} from "./lib/server/module/listener.ts";
export { HandlerError } from "./lib/server/http/errors.ts";
export { ConfigError, type ConfigErrorCode } from "./lib/server/config/error.ts";
import { ConfigError, type ConfigErrorCode } from "./lib/server/config/error.ts";
/**
 * The error a module's decoder throws for a refused config value; the name it had before the
 * server's decoders shared one error type.
 *
 * @deprecated Use {@linkcode ConfigError}, which it is.
 */
export const HttpConfigError: typeof ConfigError = ConfigError;
/**
 * The stable codes of {@linkcode ConfigError}, by their earlier name.
 *
 * @deprecated Use {@linkcode ConfigErrorCode}.
 */
export type HttpConfigErrorCode = ConfigErrorCode;
export {
  DEFAULT_RESOLVE_TIMEOUT_MS,
  resolveBindHost,
  type ResolveOptions,
} from "./lib/server/net/resolve_host.ts";
export {
  gatehousefileFromJson,
  type ReverseOptions,
  type ReverseProblem,
  type ReverseResult,
} from "./lib/server/adapters/gatehousefile/reverse/mod.ts";
export { autosavePath, configDir, dataDir } from "./lib/server/storage/dirs.ts";
export { parseEnvFile } from "./lib/server/envfile.ts";
