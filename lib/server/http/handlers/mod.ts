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

/**
 * Caddy handlers this server cannot run whose Gatehousefile syntax (and writer) it has all
 * the same, so that a Caddyfile adapts as `caddy adapt` adapts it; a config naming one is
 * refused when it is loaded (`unavailable.ts` says why where it can).
 */
export const SYNTAX_ONLY: readonly Omit<HandlerEntry, "load">[] = [
  {
    id: "http.handlers.templates",
    syntax: async () => (await import("./templates/caddyfile.ts")).syntax,
    writer: async () => (await import("./templates/writer.ts")).writer,
  },
  {
    id: "http.handlers.timeouts",
    syntax: async () => (await import("./timeouts/caddyfile.ts")).syntax,
  },
];

/** Every http handler. */
export const HANDLERS: readonly HandlerEntry[] = [
  {
    id: "http.handlers.static_response",
    load: async () => (await import("./static_response/mod.ts")).staticResponseModule,
    syntax: async () => (await import("./static_response/caddyfile.ts")).syntax,
    writer: async () => (await import("./static_response/writer.ts")).writer,
  },
  {
    id: "http.handlers.vars",
    load: async () => (await import("./vars/mod.ts")).varsModule,
    syntax: async () => (await import("./vars/caddyfile.ts")).syntax,
    writer: async () => (await import("./vars/writer.ts")).writer,
  },
  {
    id: "http.handlers.subroute",
    load: async () => (await import("./subroute/mod.ts")).subrouteModule,
    syntax: async () => (await import("./subroute/caddyfile.ts")).syntax,
    writer: async () => (await import("./subroute/writer.ts")).writer,
  },
  {
    id: "http.handlers.headers",
    load: async () => (await import("./headers/mod.ts")).headersModule,
    syntax: async () => (await import("./headers/caddyfile.ts")).syntax,
    writer: async () => (await import("./headers/writer.ts")).writer,
  },
  {
    id: "http.handlers.push",
    load: async () => (await import("./push/mod.ts")).pushModule,
    syntax: async () => (await import("./push/caddyfile.ts")).syntax,
    writer: async () => (await import("./push/writer.ts")).writer,
  },
  {
    id: "http.handlers.rewrite",
    load: async () => (await import("./rewrite/mod.ts")).rewriteModule,
    syntax: async () => (await import("./rewrite/caddyfile.ts")).syntax,
    writer: async () => (await import("./rewrite/writer.ts")).writer,
  },
  {
    id: "http.handlers.map",
    load: async () => (await import("./map/mod.ts")).mapModule,
    syntax: async () => (await import("./map/caddyfile.ts")).syntax,
    writer: async () => (await import("./map/writer.ts")).writer,
  },
  {
    id: "http.handlers.error",
    load: async () => (await import("./error/mod.ts")).errorModule,
    syntax: async () => (await import("./error/caddyfile.ts")).syntax,
    writer: async () => (await import("./error/writer.ts")).writer,
  },
  {
    id: "http.handlers.authentication",
    load: async () => (await import("./authentication/mod.ts")).authenticationModule,
    syntax: async () => (await import("./authentication/caddyfile.ts")).syntax,
    writer: async () => (await import("./authentication/writer.ts")).writer,
  },
  {
    id: "http.handlers.request_body",
    load: async () => (await import("./request_body/mod.ts")).requestBodyModule,
    syntax: async () => (await import("./request_body/caddyfile.ts")).syntax,
    writer: async () => (await import("./request_body/writer.ts")).writer,
  },
  {
    id: "http.handlers.intercept",
    load: async () => (await import("./intercept/mod.ts")).interceptModule,
    syntax: async () => (await import("./intercept/caddyfile.ts")).syntax,
    writer: async () => (await import("./intercept/writer.ts")).writer,
  },
  {
    id: "http.handlers.copy_response",
    load: async () => (await import("./reverse_proxy/copy_response.ts")).copyResponseModule,
    syntax: async () => (await import("./reverse_proxy/caddyfile_response.ts")).syntax,
    writer: async () =>
      (await import("./reverse_proxy/writer_copy_response.ts")).copyResponseWriter,
  },
  {
    id: "http.handlers.copy_response_headers",
    load: async () => (await import("./reverse_proxy/copy_response.ts")).copyResponseHeadersModule,
    syntax: async () => (await import("./reverse_proxy/caddyfile_response.ts")).syntax,
    writer: async () =>
      (await import("./reverse_proxy/writer_copy_response.ts")).copyResponseHeadersWriter,
  },
  {
    id: "http.handlers.invoke",
    load: async () => (await import("./invoke/mod.ts")).invokeModule,
    syntax: async () => (await import("./invoke/caddyfile.ts")).syntax,
    writer: async () => (await import("./invoke/writer.ts")).writer,
  },
  {
    id: "http.handlers.log_append",
    load: async () => (await import("./log_append/mod.ts")).logAppendModule,
    syntax: async () => (await import("./log_append/caddyfile.ts")).syntax,
    writer: async () => (await import("./log_append/writer.ts")).writer,
  },
  {
    id: "http.handlers.encode",
    load: async () => (await import("./encode/mod.ts")).encodeModule,
    syntax: async () => (await import("./encode/caddyfile.ts")).syntax,
    writer: async () => (await import("./encode/writer.ts")).writer,
  },
  {
    id: "http.handlers.file_server",
    load: async () => (await import("./file_server/mod.ts")).fileServerModule,
    syntax: async () => (await import("./file_server/caddyfile.ts")).syntax,
    writer: async () => (await import("./file_server/writer.ts")).writer,
  },
  {
    id: "http.handlers.acme_server",
    load: async () => (await import("./acme_server/mod.ts")).acmeServerModule,
    syntax: async () => (await import("./acme_server/caddyfile.ts")).syntax,
    writer: async () => (await import("./acme_server/writer.ts")).writer,
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
    syntax: async () => (await import("./reverse_proxy/caddyfile.ts")).syntax,
    writer: async () => (await import("./reverse_proxy/writer.ts")).writer,
  },
];
