/**
 * The table of the request matchers (`http.matchers.*`): each entry names the matcher's id,
 * its definition, its Gatehousefile syntax (the set of `caddyfile.ts`, which every matcher's
 * is part of) and its JSON → Gatehousefile writer (`writer.ts`). Every part loads only when
 * used: a server loads the matchers its config names, the adapter the syntax, `adapt
 * --reverse` the writers. A new matcher is its file (config type, decoder, module), its
 * syntax and writer, and one entry here.
 *
 * @module
 */
import type { SyntaxEntry } from "../../caddyfile/registry.ts";
import type { MatcherWriter } from "../../caddyfile/writer/matchers.ts";
import type { MatcherConfigs } from "./writer.ts";

/** One request matcher: its module, Gatehousefile syntax and writer. */
export interface MatcherEntry extends SyntaxEntry {
  /** Loads the matcher's JSON → Gatehousefile writer. */
  writer?(): Promise<MatcherWriter>;
}

const syntax = async () => (await import("./caddyfile.ts")).syntax;
const writer = (name: keyof MatcherConfigs) => async () =>
  (await import("./writer.ts")).WRITERS[name];

/** Every request matcher. */
export const MATCHERS: readonly MatcherEntry[] = [
  {
    id: "http.matchers.host",
    load: async () => (await import("./host.ts")).hostMatcherModule,
    syntax,
    writer: writer("host"),
  },
  {
    id: "http.matchers.method",
    load: async () => (await import("./method.ts")).methodMatcherModule,
    syntax,
    writer: writer("method"),
  },
  {
    id: "http.matchers.path",
    load: async () => (await import("./path.ts")).pathMatcherModule,
    syntax,
    writer: writer("path"),
  },
  {
    id: "http.matchers.path_regexp",
    load: async () => (await import("./path_regexp.ts")).pathRegexpMatcherModule,
    syntax,
    writer: writer("path_regexp"),
  },
  {
    id: "http.matchers.header",
    load: async () => (await import("./header.ts")).headerMatcherModule,
    syntax,
    writer: writer("header"),
  },
  {
    id: "http.matchers.header_regexp",
    load: async () => (await import("./header_regexp.ts")).headerRegexpMatcherModule,
    syntax,
    writer: writer("header_regexp"),
  },
  {
    id: "http.matchers.query",
    load: async () => (await import("./query.ts")).queryMatcherModule,
    syntax,
    writer: writer("query"),
  },
  {
    id: "http.matchers.protocol",
    load: async () => (await import("./protocol.ts")).protocolMatcherModule,
    syntax,
    writer: writer("protocol"),
  },
  {
    id: "http.matchers.remote_ip",
    load: async () => (await import("./remote_ip.ts")).remoteIPMatcherModule,
    syntax,
    writer: writer("remote_ip"),
  },
  {
    id: "http.matchers.client_ip",
    load: async () => (await import("./remote_ip.ts")).clientIPMatcherModule,
    syntax,
    writer: writer("client_ip"),
  },
  {
    id: "http.matchers.not",
    load: async () => (await import("./not.ts")).notMatcherModule,
    syntax,
    writer: writer("not"),
  },
  {
    id: "http.matchers.vars",
    load: async () => (await import("./vars.ts")).varsMatcherModule,
    syntax,
    writer: writer("vars"),
  },
  {
    id: "http.matchers.vars_regexp",
    load: async () => (await import("./vars.ts")).varsRegexpMatcherModule,
    syntax,
    writer: writer("vars_regexp"),
  },
  {
    id: "http.matchers.expression",
    load: async () => (await import("./expression.ts")).expressionMatcherModule,
    syntax,
    writer: writer("expression"),
  },
  {
    id: "http.matchers.url_pattern",
    load: async () => (await import("./url_pattern.ts")).urlPatternMatcherModule,
    syntax,
    writer: writer("url_pattern"),
  },
  {
    id: "http.matchers.file",
    load: async () => (await import("./file.ts")).fileMatcherModule,
    syntax,
    writer: writer("file"),
  },
];
