/**
 * The table of the http handlers (`http.handlers.*`): each entry names the module's id, its
 * definition, and, where the module has them, its Gatehousefile syntax (`caddyfile.ts`) and
 * its JSON → Gatehousefile writer (`writer.ts`). Every part loads only when used: a server
 * loads the handlers its config names, the adapter the syntaxes, `adapt --reverse` the writers.
 * A new handler is its folder (`config.ts`, `mod.ts`, `caddyfile.ts`, `writer.ts`) and one
 * entry here.
 *
 * @module
 */
import type { ModuleEntry } from "../../module/mod.ts";
import type { SyntaxSet } from "../../caddyfile/registry.ts";
import type { HandlerReverser } from "../../caddyfile/writer/context.ts";

/** One http handler: its module, and its Gatehousefile syntax and writer when it has them. */
export interface HandlerEntry extends ModuleEntry {
  /** Loads the module's Gatehousefile syntax. */
  syntax?(): Promise<SyntaxSet>;
  /** Loads the module's JSON → Gatehousefile writer. */
  // deno-lint-ignore no-explicit-any
  writer?(): Promise<HandlerReverser<any>>;
}

/** Every http handler. */
export const HANDLERS: readonly HandlerEntry[] = [
  {
    id: "http.handlers.static_response",
    load: async () => (await import("./static_response/mod.ts")).staticResponseModule,
    syntax: async () => (await import("./static_response/caddyfile.ts")).syntax,
    writer: async () => (await import("./static_response/writer.ts")).writer,
  },
  {
    id: "http.handlers.subroute",
    load: async () => (await import("./subroute.ts")).subrouteModule,
  },
  { id: "http.handlers.headers", load: async () => (await import("./headers.ts")).headersModule },
  { id: "http.handlers.push", load: async () => (await import("./push.ts")).pushModule },
  { id: "http.handlers.rewrite", load: async () => (await import("./rewrite.ts")).rewriteModule },
  { id: "http.handlers.vars", load: async () => (await import("./vars.ts")).varsModule },
  { id: "http.handlers.map", load: async () => (await import("./map.ts")).mapModule },
  { id: "http.handlers.error", load: async () => (await import("./error.ts")).errorModule },
  {
    id: "http.handlers.authentication",
    load: async () => (await import("./authentication.ts")).authenticationModule,
  },
  {
    id: "http.handlers.request_body",
    load: async () => (await import("./request_body.ts")).requestBodyModule,
  },
  {
    id: "http.handlers.intercept",
    load: async () => (await import("./intercept.ts")).interceptModule,
  },
  {
    id: "http.handlers.copy_response",
    load: async () => (await import("./reverse_proxy/handle_response.ts")).copyResponseModule,
  },
  {
    id: "http.handlers.copy_response_headers",
    load: async () =>
      (await import("./reverse_proxy/handle_response.ts")).copyResponseHeadersModule,
  },
  { id: "http.handlers.invoke", load: async () => (await import("./invoke.ts")).invokeModule },
  {
    id: "http.handlers.log_append",
    load: async () => (await import("./log_append.ts")).logAppendModule,
  },
  { id: "http.handlers.encode", load: async () => (await import("./encode.ts")).encodeModule },
  {
    id: "http.handlers.file_server",
    load: async () => (await import("./file_server/mod.ts")).fileServerModule,
    syntax: async () => (await import("./file_server/caddyfile.ts")).syntax,
    writer: async () => (await import("./file_server/writer.ts")).writer,
  },
  {
    id: "http.handlers.acme_server",
    load: async () => (await import("./acme_server/mod.ts")).acmeServerModule,
  },
  {
    id: "http.handlers.cache",
    load: async () => (await import("./cache/mod.ts")).cacheModule,
    syntax: async () => (await import("./cache/caddyfile.ts")).syntax,
    writer: async () => (await import("./cache/writer.ts")).writer,
  },
  {
    id: "http.handlers.rate_limit",
    load: async () => (await import("./rate_limit/mod.ts")).rateLimitModule,
    syntax: async () => (await import("./rate_limit/caddyfile.ts")).syntax,
    writer: async () => (await import("./rate_limit/writer.ts")).writer,
  },
  {
    id: "http.handlers.reverse_proxy",
    load: async () => (await import("./reverse_proxy/mod.ts")).reverseProxyModule,
  },
];
