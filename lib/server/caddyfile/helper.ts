/**
 * The helper a directive receives: a dispenser over the directive's tokens plus the adapt
 * state (global options, warnings, named matchers in scope, route group counter, shared
 * state), and the route-building shortcuts directives share.
 *
 * @module
 */
import type { AdapterWarning } from "../adapter.ts";
import { didYouMean, Dispenser, errorAt } from "./dispenser.ts";
import type { Token } from "./lexer.ts";
import type { ServerBlock } from "./parser.ts";
import { type ConfigValue, type Handler, type MatcherSet, type Route, RouteList } from "./types.ts";

/** State shared by every helper of one adaptation. */
export interface AdaptContext {
  /** Global options by name. */
  options: Map<string, unknown>;
  /** Warnings collected so far. */
  warnings: AdapterWarning[];
  /** Handler directives in run order (the `order` option changes it). */
  order: string[];
  /** Counter for route group names (`group0`, `group1`, ...). */
  groups: { n: number };
}

/** The per-scope part of a helper. */
export interface HelperScope {
  /** Named matchers in scope, by `@name`. */
  matcherDefs: Map<string, MatcherSet>;
  /** The site block being adapted. */
  parentBlock: ServerBlock;
  /** State shared by the whole site block (e.g. `tls` certificate tags, log counter). */
  state: Record<string, unknown>;
  /** State visible to this block and nested ones, not to the parent (e.g. `root`). */
  blockState: Record<string, unknown>;
}

/**
 * A dispenser over one directive's tokens with the adapt state. Mirrors Caddy's
 * `httpcaddyfile.Helper`.
 */
export class Helper extends Dispenser {
  /** Adapt-wide state. */
  readonly ctx: AdaptContext;
  /** Scope of this directive. */
  readonly scope: HelperScope;

  /** A helper over `tokens`. */
  constructor(tokens: Token[], ctx: AdaptContext, scope: HelperScope) {
    super(tokens);
    this.ctx = ctx;
    this.scope = scope;
  }

  /** A helper over another dispenser's tokens (and cursor) with the same state. */
  withDispenser(d: Dispenser, scope: Partial<HelperScope> = {}): Helper {
    const h = new Helper(d.tokens, this.ctx, { ...this.scope, ...scope });
    h.cursor = d.cursor;
    h.depth = d.nesting();
    return h;
  }

  /** The value of a global option. */
  option(name: string): unknown {
    return this.ctx.options.get(name);
  }

  /** Adds a warning located at the current token. */
  warn(message: string): void {
    this.ctx.warnings.push({ file: this.file(), line: this.line(), message });
  }

  /** The next route group name. */
  nextGroup(): string {
    return `group${this.ctx.groups.n++}`;
  }

  /** The sorted list of files the current site block's tokens came from. */
  caddyfiles(): string[] {
    const files = new Set<string>();
    for (const seg of this.scope.parentBlock.segments) for (const t of seg) files.add(t.file);
    return [...files].sort();
  }

  /**
   * When the next argument is a matcher token (`*`, `/path`, `@name`), its matcher set
   * (undefined for `*`) and true; otherwise false (the argument is still consumed).
   */
  matcherToken(): [MatcherSet | undefined, boolean] {
    if (!this.nextArg()) return [undefined, false];
    return matcherSetFromToken(this.token(), this.scope.matcherDefs);
  }

  /**
   * Looks ahead for a matcher token: returns its matcher set (or undefined), removes the token
   * from the dispenser and rewinds to the start, as if the look-ahead never happened.
   */
  extractMatcherSet(): MatcherSet | undefined {
    const [set, has] = this.matcherToken();
    if (has) this.delete();
    this.reset();
    return set;
  }

  /** One `route` config value: `handler` behind the optional matcher set. */
  newRoute(matcherSet: MatcherSet | undefined, handler: Handler): ConfigValue[] {
    const route: Route = { handle: [handler] };
    if (matcherSet) route.match = [matcherSet];
    return [{ class: "route", value: route }];
  }

  /** Puts the route values of `vals` into one group (when there are two or more). */
  groupRoutes(vals: ConfigValue[]): void {
    const routes = vals.filter((v) => isRoute(v.value));
    if (routes.length < 2) return;
    const group = this.nextGroup();
    for (const v of routes) v.value = { ...(v.value as Route), group };
  }
}

const ROUTE_FIELDS = new Set(["group", "match", "handle", "terminal"]);

/**
 * True when `v` is a plain Route object (not a RouteList): a plain object with no field
 * but `group`, `match`, `handle` and `terminal`.
 */
export function isRoute(v: unknown): v is Route {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype &&
    Object.keys(v).every((k) => ROUTE_FIELDS.has(k));
}

/** True when a directive's value is an HTTP route or a list of routes (class `route`). */
export function isRouteValue(v: ConfigValue): boolean {
  return v.class === "route" && (isRoute(v.value) || v.value instanceof RouteList);
}

/**
 * Key of `HelperScope.state` under which directives nested in blocks (`handle`, `route`,
 * named routes) leave the values that belong to the site rather than to the routes (the CA
 * of an `acme_server`); the site collects them after each directive.
 */
export const SIDE_VALUES_KEY = "side_values";

/** Classes of values a handler directive may give besides its routes, for the site. */
export const SIDE_CLASSES: ReadonlySet<string> = new Set(["pki.ca"]);

/** The first token of each global option, by name (errors about an option point there). */
export function optionTokens(options: Map<string, unknown>): Map<string, Token> {
  let m = options.get("option_tokens") as Map<string, Token> | undefined;
  if (!m) options.set("option_tokens", m = new Map());
  return m;
}

/**
 * The matcher set a matcher token stands for: `*` → none (match all), `/path` → a path
 * matcher, `@name` → a named matcher in scope; other tokens are not matchers.
 */
export function matcherSetFromToken(
  t: Token,
  defs: Map<string, MatcherSet>,
): [MatcherSet | undefined, boolean] {
  if (t.text === "*") return [undefined, true];
  if (t.text.startsWith("/")) return [{ path: [t.text] }, true];
  if (t.text.startsWith("@")) {
    const m = defs.get(t.text);
    if (!m) {
      throw errorAt(t, `unrecognized matcher name: ${t.text}${didYouMean(t.text, defs.keys())}`);
    }
    return [m, true];
  }
  return [undefined, false];
}
