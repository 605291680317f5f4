/**
 * Shared state of one JSON → Gatehousefile conversion: problems, the matcher scope of the
 * block being written, the sorted route lists (whose order the `order` option or `route`
 * blocks keep), and the handler table.
 *
 * @module
 */
import type { Token } from "../lexer.ts";
import type { MatcherScope } from "./matchers.ts";
import type { SortUnit } from "./order.ts";
import type { Fields, Problems } from "./problems.ts";
import type { Line } from "./tokens.ts";

/** A handler written as a directive: the name, its arguments (after the matcher) and block. */
export interface Directive {
  /** The directive name (also what it sorts as). */
  name: string;
  /** Arguments after the matcher token. */
  args: Token[];
  /** The block, if any. */
  block?: Line[];
  /** Marks directives whose first argument is never a matcher (e.g. `root` with one argument). */
  noMatcherToken?: boolean;
  /** Without a matcher, write `*` before the arguments (`root * /srv`). */
  starFirst?: boolean;
  /** The directive writes the route's matcher itself (`handle_path <path>`). */
  replacesMatcher?: boolean;
}

/** A list of directives the adapter will sort; kept so a `route` block can wrap it later. */
export interface SortedList {
  /** The directives as sort units. */
  units: SortUnit[];
  /** The written lines (mutated in place when wrapped). */
  lines: Line[];
  /** JSON path of the route list, for the warning when wrapped. */
  path: string;
}

/**
 * Writes one handler module as directive(s); returns null after reporting a problem. `T` is
 * the module's config type, so the fields a writer reads are the module's own.
 */
// deno-lint-ignore no-explicit-any
export type HandlerReverser<T extends Record<string, any> = Record<string, unknown>> = (
  f: Fields<T>,
  ctx: Ctx,
) => Directive | Directive[] | null;

/** Conversion state handed to every part. */
export interface Ctx {
  /** Where problems go. */
  problems: Problems;
  /** Named matchers of the current site block or named route. */
  scope: MatcherScope;
  /** Every sorted list written so far. */
  sorted: SortedList[];
  /** True while the list being written has exactly one subroute, ungrouped (it may be `handle`). */
  soleHandle: boolean;
  /** True while the handlers of a grouped route are written (a subroute is then `handle`). */
  inGroup: boolean;
  /** The config file name a file_server hid (the adapter adds the new file's name instead). */
  fileHidden?: string;
  /** The `debug` global option is written (DEBUG log levels are implied). */
  debug: boolean;
  /** `exclude` entries of the default log that the adapter adds for site logs. */
  impliedExcludes: Set<string>;
  /** The `match` of the route whose handlers are being written. */
  routeMatch: unknown;
  /** How many handlers that route has. */
  routeHandlers: number;
  /** Writes one handler as directive(s) (a handler inside another); null after a problem. */
  handler(h: unknown, path: string): Directive[] | null;
  /** Writes a route list (recursion for subroutes), skipping its first `skip` routes. */
  routes(routes: unknown, path: string, sorted: boolean, skip?: number): Line[];
  /**
   * The directive a subroute's routes are the expansion of (`php_fastcgi` under a matcher),
   * or null.
   */
  expansion(routes: unknown[], path: string): Directive | null;
}
