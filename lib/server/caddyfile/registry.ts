/**
 * What the Gatehousefile knows: directives (with Caddy's default order of handler
 * directives), global options, request matchers and other module syntaxes. Each module's
 * syntax lives beside the module (its `caddyfile.ts` exports one {@linkcode SyntaxSet}) and is
 * named by the module's entry in its kind's table; the adapter registers every set it finds
 * there, and the assembler's own (global options, site directives).
 *
 * @module
 */
import { didYouMean, Dispenser, errorAt, MATCHER_NAME_CONTEXT_KEY } from "./dispenser.ts";
import { cloneToken, isQuoted, type Token } from "./lexer.ts";
import type { Helper } from "./helper.ts";
import type { ConfigValue, Handler, MatcherSet } from "./types.ts";
import type { ModuleEntry } from "../module/mod.ts";

/** A directive: reads its segment through the helper, returns config values. */
export type DirectiveFn = (h: Helper) => ConfigValue[];
/** A handler directive: returns the handler; the optional matcher token is handled for it. */
export type HandlerDirectiveFn = (h: Helper) => Handler;
/**
 * A global option: reads its segment, returns the option's value; `existing` is the value of
 * an earlier occurrence of the same option. `h` gives access to the adapt state.
 */
export type GlobalOptionFn = (d: Dispenser, existing: unknown, h: Helper) => unknown;
/** A module's Caddyfile syntax: reads tokens starting at the module name, returns its JSON. */
export type SyntaxFn = (d: Dispenser) => unknown;

/**
 * Handler directives in the order they run by default (Caddy's `defaultDirectiveOrder`).
 * `order` and `route` change it per config.
 */
export const DEFAULT_DIRECTIVE_ORDER: readonly string[] = [
  "tracing",
  "map",
  "vars",
  "fs",
  "root",
  "log_append",
  "skip_log",
  "log_skip",
  "log_name",
  "header",
  "copy_response_headers",
  "request_body",
  "timeouts",
  "redir",
  "method",
  // cache-handler registers its directive before rewrite (httpcache.go)
  "cache",
  "rewrite",
  "uri",
  "try_files",
  // caddy-ratelimit registers its directive before basic_auth (caddyfile.go)
  "rate_limit",
  "basicauth",
  "basic_auth",
  "forward_auth",
  "request_header",
  "encode",
  "push",
  "intercept",
  "templates",
  "invoke",
  "handle",
  "handle_path",
  "route",
  "abort",
  "error",
  "copy_response",
  "respond",
  "metrics",
  "reverse_proxy",
  "php_fastcgi",
  "file_server",
  "acme_server",
];

/**
 * The Gatehousefile syntax one module file gives: its directives (those that return config
 * values, and handler directives that return one handler), global options, and module
 * syntaxes (Caddy's `UnmarshalCaddyfile`, by module id).
 */
export interface SyntaxSet {
  /** Directives returning config values (`tls`, `php_fastcgi`, `handle_path`...). */
  directives?: Readonly<Record<string, DirectiveFn>>;
  /** Handler directives (`respond`, `file_server`...); the matcher token is handled for them. */
  handlerDirectives?: Readonly<Record<string, HandlerDirectiveFn>>;
  /** Global options. */
  globalOptions?: Readonly<Record<string, GlobalOptionFn>>;
  /** Module syntaxes by module id (`http.matchers.path`, `http.encoders.gzip`...). */
  modules?: Readonly<Record<string, SyntaxFn>>;
}

/**
 * An entry of a module kind's table as the adapter reads it: the module, and the syntax set
 * of its Gatehousefile syntax when it has one (several entries may name the same set).
 */
export interface SyntaxEntry extends ModuleEntry {
  /** Loads the module's Gatehousefile syntax. */
  syntax?(): Promise<SyntaxSet>;
}

/**
 * Registers everything a {@linkcode SyntaxSet} gives.
 *
 * @example
 * ```ts ignore
 * registerSyntaxSet({ handlerDirectives: { hello: (h) => ({ handler: "hello" }) } });
 * ```
 */
export function registerSyntaxSet(set: SyntaxSet): void {
  for (const [name, fn] of Object.entries(set.directives ?? {})) registerDirective(name, fn);
  for (const [name, fn] of Object.entries(set.handlerDirectives ?? {})) {
    registerHandlerDirective(name, fn);
  }
  for (const [name, fn] of Object.entries(set.globalOptions ?? {})) registerGlobalOption(name, fn);
  for (const [id, fn] of Object.entries(set.modules ?? {})) registerSyntax(id, fn);
}

const directives = new Map<string, DirectiveFn>();
const globalOptions = new Map<string, GlobalOptionFn>();
const syntaxes = new Map<string, SyntaxFn>();

/**
 * Registers a directive.
 *
 * @example
 * ```ts ignore
 * registerDirective("bind", (h) => { h.next(); return [{ class: "bind", value: h.remainingArgs() }]; });
 * ```
 */
export function registerDirective(name: string, fn: DirectiveFn): void {
  if (directives.has(name)) throw new Error(`directive ${name} already registered`);
  directives.set(name, fn);
}

/**
 * Registers a handler directive: its first argument may be a matcher token (`*`, `/path`,
 * `@name`), which becomes the route's matcher; `fn` sees the tokens without it.
 *
 * @example
 * ```ts ignore
 * registerHandlerDirective("abort", (h) => { h.next(); return { handler: "static_response", abort: true }; });
 * ```
 */
export function registerHandlerDirective(name: string, fn: HandlerDirectiveFn): void {
  registerDirective(name, (h) => {
    if (!h.next()) throw h.argErr();
    const matcherSet = h.extractMatcherSet();
    return h.newRoute(matcherSet, fn(h));
  });
}

/** Registers a global option. */
export function registerGlobalOption(name: string, fn: GlobalOptionFn): void {
  if (globalOptions.has(name)) throw new Error(`global option ${name} already registered`);
  globalOptions.set(name, fn);
}

/**
 * Registers the Caddyfile syntax of a module by its full id, e.g. `http.matchers.path` or
 * `caddy.logging.writers.file`.
 */
export function registerSyntax(moduleId: string, fn: SyntaxFn): void {
  if (syntaxes.has(moduleId)) throw new Error(`syntax of ${moduleId} already registered`);
  syntaxes.set(moduleId, fn);
}

/** The directive named `name`, if any. */
export function getDirective(name: string): DirectiveFn | undefined {
  return directives.get(name);
}

/** Names of every directive. */
export function directiveNames(): string[] {
  return [...directives.keys()];
}

/** The global option named `name`, if any. */
export function getGlobalOption(name: string): GlobalOptionFn | undefined {
  return globalOptions.get(name);
}

/** Names of every global option. */
export function globalOptionNames(): string[] {
  return [...globalOptions.keys()];
}

/** The syntax of module `moduleId`, if any. */
export function getSyntax(moduleId: string): SyntaxFn | undefined {
  return syntaxes.get(moduleId);
}

/** Names (last id segment) of the registered modules of a namespace, e.g. `http.matchers`. */
export function syntaxNames(namespace: string): string[] {
  const prefix = namespace + ".";
  return [...syntaxes.keys()].filter((k) => k.startsWith(prefix)).map((k) =>
    k.slice(prefix.length)
  );
}

/**
 * Reads the module syntax `moduleId` from the segment at the cursor (Caddy's
 * `UnmarshalModule`): the module sees a new dispenser whose first token is the module name.
 */
export function unmarshalModule(d: Dispenser, moduleId: string): unknown {
  const fn = getSyntax(moduleId);
  if (!fn) {
    const ns = moduleId.slice(0, moduleId.lastIndexOf("."));
    const name = moduleId.slice(ns.length + 1);
    throw d.err(
      `getting module named '${moduleId}': module not registered: ${moduleId}${
        didYouMean(name, syntaxNames(ns))
      }`,
    );
  }
  return fn(d.newFromNextSegment());
}

/**
 * Parses a named matcher definition (`@name <matcher> <args>` or `@name { ... }`, or
 * `@name "<expression>"`) into `defs`.
 */
export function parseMatcherDefinition(d: Dispenser, defs: Map<string, MatcherSet>): void {
  d.next();
  const name = d.val();
  if (defs.has(name)) throw d.err(`matcher is defined more than once: ${name}`);
  const set: MatcherSet = {};
  defs.set(name, set);
  const make = (matcher: string, tokens: Token[]) => {
    const sub = new Dispenser(tokens);
    sub.setContext(MATCHER_NAME_CONTEXT_KEY, name.slice(1));
    const fn = getSyntax(`http.matchers.${matcher}`);
    if (!fn) {
      throw errorAt(
        tokens[0],
        `getting matcher module '${matcher}': module not registered: http.matchers.${matcher}${
          didYouMean(matcher, syntaxNames("http.matchers"))
        }`,
      );
    }
    set[matcher] = fn(sub);
  };
  // a quoted first argument is a CEL expression without the matcher name
  if (d.nextArg()) {
    if (isQuoted(d.token())) {
      const exprToken = { ...cloneToken(d.token()), text: "expression", quote: "" as const };
      make("expression", [exprToken, d.token()]);
      return;
    }
    d.prev();
  }
  const byName = new Map<string, Token[]>();
  for (const n = d.nesting(); d.nextArg() || d.nextBlock(n);) {
    const matcher = d.val();
    byName.set(matcher, [...(byName.get(matcher) ?? []), ...d.nextSegment()]);
  }
  for (const [matcher, tokens] of byName) make(matcher, tokens);
}
