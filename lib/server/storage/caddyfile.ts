/**
 * Gatehousefile syntax of the storage modules (the global `storage` option and wherever a
 * storage is named, e.g. a CA pool's `storage` source):
 *
 * ```
 * storage file_system [<root>] {
 *     root <path>
 * }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../caddyfile/registry.ts";

/** `file_system [<root>] { root <path> }`. */
export function fileSystemStorage(d: Dispenser): Record<string, unknown> {
  if (!d.next()) throw d.err("expected tokens");
  let root = "";
  if (d.nextArg()) root = d.val();
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "root") throw d.unknownSubdirective(["root"], "unrecognized parameter '%s'");
    if (!d.nextArg()) throw d.argErr();
    if (root !== "") throw d.err("root already set");
    root = d.val();
    if (d.nextArg()) throw d.argErr();
  }
  if (root === "") throw d.err("missing root path (to use default, omit storage config entirely)");
  return { root };
}

/** The Gatehousefile syntax of the storage modules. */
export const syntax: SyntaxSet = {
  modules: { "caddy.storage.file_system": fileSystemStorage },
};
