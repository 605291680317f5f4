/**
 * Gatehousefile syntax of the `vars` handler and the directives that set variables:
 * `vars`, `root`, `fs`, `log_skip` (and the old name `skip_log`), `log_name`.
 *
 * ```
 * vars [<matcher>] [<name> <value>] { <name> <value> ... }
 * root [<matcher>] <path>
 * fs <filesystem>
 * log_skip [<matcher>]
 * log_name [<matcher>] <names...>
 * ```
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { ConfigValue } from "../../../caddyfile/types.ts";
import type { VarsConfig } from "./config.ts";

/** `vars`: names and values (numbers and booleans unquoted become JSON numbers/booleans). */
export function parseVars(h: Helper): VarsConfig {
  h.next();
  const out: VarsConfig = { handler: "vars" };
  const nextVar = (headerLine: boolean) => {
    if (headerLine && !h.nextArg()) return;
    const name = h.val();
    if (!h.nextArg()) throw h.argErr();
    out[name] = h.scalarVal();
    if (h.nextArg()) throw h.argErr();
  };
  nextVar(true);
  for (const n = h.nesting(); h.nextBlock(n);) nextVar(false);
  return out;
}

/** `root`: sets the `root` variable (site root for file_server and friends). */
export function parseRoot(h: Helper): ConfigValue[] {
  h.next();
  const count = h.countRemainingArgs();
  if (count === 0) throw h.err("too few arguments; must have at least a root path");
  if (count > 2) throw h.err("too many arguments; should only be a matcher and a path");
  if (count === 1) {
    if (!h.nextArg()) throw h.argErr();
    h.scope.blockState.root = h.val();
    const vars: VarsConfig = { handler: "vars", root: h.val() };
    return h.newRoute(undefined, vars);
  }
  const matcher = h.extractMatcherSet();
  h.next();
  if (!h.nextArg()) throw h.argErr();
  if (!matcher) h.scope.blockState.root = h.val();
  const vars: VarsConfig = { handler: "vars", root: h.val() };
  return h.newRoute(matcher, vars);
}

/** `fs`: sets the file system to use (a name of the `filesystem` global option). */
export function parseFilesystem(h: Helper): VarsConfig {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  if (h.nextArg()) throw h.argErr();
  return { handler: "vars", fs: h.val() };
}

/** `log_skip`: requests it matches are not access-logged. */
export function parseLogSkip(h: Helper): VarsConfig {
  h.next();
  if (h.val() === "skip_log") {
    h.warn("the 'skip_log' directive is deprecated, please use 'log_skip' instead!");
  }
  if (h.nextArg()) throw h.argErr();
  if (h.nextBlock(0)) throw h.err("log_skip directive does not accept blocks");
  return { handler: "vars", log_skip: true };
}

/** `log_name`: the access loggers to use for requests it matches. */
export function parseLogName(h: Helper): VarsConfig {
  h.next();
  return { handler: "vars", access_logger_names: h.remainingArgs() };
}

/** The Gatehousefile syntax of `vars`. */
export const syntax: SyntaxSet = {
  directives: { root: parseRoot },
  handlerDirectives: {
    vars: parseVars,
    fs: parseFilesystem,
    skip_log: parseLogSkip,
    log_skip: parseLogSkip,
    log_name: parseLogName,
  },
};
