/**
 * The table of the request matchers (`http.matchers.*`); each matcher's code loads when a
 * config first uses it.
 *
 * @module
 */
import type { ModuleEntry } from "../../module/mod.ts";

/** Every request matcher. */
export const MATCHERS: readonly ModuleEntry[] = [
  { id: "http.matchers.host", load: async () => (await import("./host.ts")).hostMatcherModule },
  {
    id: "http.matchers.method",
    load: async () => (await import("./method.ts")).methodMatcherModule,
  },
  { id: "http.matchers.path", load: async () => (await import("./path.ts")).pathMatcherModule },
  {
    id: "http.matchers.path_regexp",
    load: async () => (await import("./path_regexp.ts")).pathRegexpMatcherModule,
  },
  {
    id: "http.matchers.header",
    load: async () => (await import("./header.ts")).headerMatcherModule,
  },
  {
    id: "http.matchers.header_regexp",
    load: async () => (await import("./header_regexp.ts")).headerRegexpMatcherModule,
  },
  { id: "http.matchers.query", load: async () => (await import("./query.ts")).queryMatcherModule },
  {
    id: "http.matchers.protocol",
    load: async () => (await import("./protocol.ts")).protocolMatcherModule,
  },
  {
    id: "http.matchers.remote_ip",
    load: async () => (await import("./remote_ip.ts")).remoteIPMatcherModule,
  },
  {
    id: "http.matchers.client_ip",
    load: async () => (await import("./remote_ip.ts")).clientIPMatcherModule,
  },
  { id: "http.matchers.not", load: async () => (await import("./not.ts")).notMatcherModule },
  { id: "http.matchers.vars", load: async () => (await import("./vars.ts")).varsMatcherModule },
  {
    id: "http.matchers.vars_regexp",
    load: async () => (await import("./vars.ts")).varsRegexpMatcherModule,
  },
  {
    id: "http.matchers.expression",
    load: async () => (await import("./expression.ts")).expressionMatcherModule,
  },
  {
    id: "http.matchers.url_pattern",
    load: async () => (await import("./url_pattern.ts")).urlPatternMatcherModule,
  },
  { id: "http.matchers.file", load: async () => (await import("./file.ts")).fileMatcherModule },
];
