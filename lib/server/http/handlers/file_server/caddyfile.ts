/**
 * Gatehousefile syntax of the file server: the `file_server` directive and `try_files` (the
 * `file` request matcher's is with the other matchers', `matchers/caddyfile.ts`).
 *
 * ```
 * file_server [<matcher>] [browse] {
 *     fs <filesystem>   root <path>   hide <files...>   index <filenames...>
 *     browse [<template>] { reveal_symlinks; sort <by> <order>; file_limit <n> }
 *     precompressed [<formats...>]   status <code>   disable_canonical_uris   pass_thru
 *     etag_file_extensions <exts...>
 * }
 * try_files <files...> { policy first_exist|first_exist_fallback|largest_size|smallest_size|most_recently_modified }
 * ```
 *
 * The Gatehousefile itself (and every imported file) is added to `hide`, so a site never
 * serves its own config.
 *
 * @module
 */
import { goClean } from "../../pathutil.ts";
import { didYouMean } from "../../../caddyfile/dispenser.ts";
import { absPath, localFiles, matchGlobElement } from "../../../caddyfile/files.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import type { ConfigValue } from "../../../caddyfile/types.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { BrowseConfig, FileServerConfig } from "./config.ts";
import { weakString } from "../../../caddyfile/values.ts";

const SUBDIRECTIVES = [
  "fs",
  "hide",
  "index",
  "root",
  "browse",
  "precompressed",
  "status",
  "disable_canonical_uris",
  "pass_thru",
  "etag_file_extensions",
];
const SORT = ["name", "namedirfirst", "size", "time", "asc", "desc"];
const PRECOMPRESSED = ["br", "zstd", "gzip"];
const TRY_POLICIES = [
  "first_exist",
  "first_exist_fallback",
  "largest_size",
  "smallest_size",
  "most_recently_modified",
];

/** `file_server`: see the module documentation. */
export function parseFileServer(h: Helper): FileServerConfig {
  h.next();
  const fs: FileServerConfig = { handler: "file_server" };
  const args = h.remainingArgs();
  if (args.length === 1) {
    if (args[0] !== "browse") throw h.argErr();
    fs.browse = {};
  } else if (args.length > 1) throw h.argErr();
  for (const n = h.nesting(); h.nextBlock(n);) {
    switch (h.val()) {
      case "fs":
        if (!h.nextArg()) throw h.argErr();
        if (fs.fs) throw h.err("file system already specified");
        fs.fs = h.val();
        break;
      case "hide": {
        const hide = h.remainingArgs();
        if (hide.length === 0) throw h.argErr();
        fs.hide = [...(fs.hide ?? []), ...hide];
        break;
      }
      case "index": {
        const idx = h.remainingArgs();
        if (idx.length === 0) throw h.argErr();
        fs.index_names = idx;
        break;
      }
      case "root": {
        const a = h.args(1);
        if (!a) throw h.argErr();
        fs.root = a[0];
        break;
      }
      case "browse":
        if (fs.browse) throw h.err("browsing is already configured");
        fs.browse = parseBrowse(h);
        break;
      case "precompressed": {
        let order = h.remainingArgs();
        if (order.length === 0) order = [...PRECOMPRESSED];
        const pre: Record<string, Record<string, never>> = {};
        for (const f of order) {
          if (!PRECOMPRESSED.includes(f)) {
            throw h.err(
              `getting module named 'http.precompressed.${f}': module not registered: http.precompressed.${f}${
                didYouMean(f, PRECOMPRESSED)
              }`,
            );
          }
          pre[f] = {};
        }
        fs.precompressed_order = order;
        fs.precompressed = pre;
        break;
      }
      case "status":
        if (!h.nextArg()) throw h.argErr();
        fs.status_code = weakString(h.val()) as string | number;
        break;
      case "disable_canonical_uris":
        if (h.nextArg()) throw h.argErr();
        fs.canonical_uris = false;
        break;
      case "pass_thru":
        if (h.nextArg()) throw h.argErr();
        fs.pass_thru = true;
        break;
      case "etag_file_extensions": {
        const ext = h.remainingArgs();
        if (ext.length === 0) throw h.argErr();
        fs.etag_file_extensions = ext;
        break;
      }
      default:
        throw h.unknownSubdirective(SUBDIRECTIVES, "unknown subdirective '%s'");
    }
  }
  // never serve the config files themselves
  for (let file of h.caddyfiles()) {
    file = goClean(file);
    const hide = fs.hide ?? [];
    if (!fileHidden(file, hide)) {
      if (!file.includes("/")) file = "./" + file;
      fs.hide = [...hide, file];
    }
  }
  return fs;
}

function parseBrowse(h: Helper): BrowseConfig {
  const browse: BrowseConfig = {};
  const tpl = h.args(1);
  if (tpl && tpl[0] !== "") browse.template_file = tpl[0];
  for (const n = h.nesting(); h.nextBlock(n);) {
    switch (h.val()) {
      case "reveal_symlinks":
        if (browse.reveal_symlinks) throw h.err("Symlinks path reveal is already enabled");
        browse.reveal_symlinks = true;
        break;
      case "sort":
        while (h.nextArg()) {
          if (!SORT.includes(h.val())) {
            throw h.unknownSubdirective(SORT, "unknown sort option '%s'");
          }
          browse.sort = [...(browse.sort ?? []), h.val()];
        }
        break;
      case "file_limit": {
        const a = h.remainingArgs();
        if (a.length !== 1) throw h.err("file_limit should have an integer value");
        const v = /^[+-]?\d+$/.test(a[0]) ? Number(a[0]) : 0;
        if (browse.file_limit) throw h.err("file_limit is already enabled");
        if (v !== 0) browse.file_limit = v;
        break;
      }
      default:
        throw h.unknownSubdirective(
          ["reveal_symlinks", "sort", "file_limit"],
          "unknown subdirective '%s'",
        );
    }
  }
  return browse;
}

/** Caddy's rule for whether `hide` already covers a file. */
function fileHidden(filename: string, hide: string[]): boolean {
  if (hide.length === 0) return false;
  filename = absPath(filename, localFiles);
  const components = filename.split("/");
  for (const h of hide) {
    if (!h.includes("/")) {
      if (components.some((c) => matchGlobElement(h, c))) return true;
    } else if (filename.startsWith(h) && filename.slice(h.length).startsWith("/")) return true;
    if (matchGlobElement(h, filename)) return true;
  }
  return false;
}

/** `try_files`: rewrites to the first file that exists (routes grouped). */
export function parseTryFiles(h: Helper): ConfigValue[] {
  if (!h.next()) throw h.argErr();
  const files = h.remainingArgs();
  if (files.length === 0) throw h.argErr();
  let policy = "";
  for (const n = h.nesting(); h.nextBlock(n);) {
    // (Caddy skips other subdirectives; here they are refused rather than ignored)
    if (h.val() !== "policy") throw h.unknownSubdirective(["policy"]);
    if (policy !== "") throw h.err("try policy already configured");
    if (!h.nextArg()) throw h.argErr();
    policy = h.val();
    if (!TRY_POLICIES.includes(policy)) {
      throw h.unknownSubdirective(TRY_POLICIES, "unrecognized try policy: %s");
    }
  }
  const route = (tryFiles: string[], query: string) => {
    const file: Record<string, unknown> = { try_files: tryFiles };
    if (policy) file.try_policy = policy;
    return h.newRoute({ file }, {
      handler: "rewrite",
      uri: `{http.matchers.file.relative}${query}`,
    });
  };
  const result: ConfigValue[] = [];
  let pending: string[] = [];
  for (const item of files) {
    const q = item.indexOf("?");
    if (q >= 0) {
      if (pending.length > 0) {
        result.push(...route(pending, ""));
        pending = [];
      }
      result.push(...route([item.slice(0, q)], item.slice(q)));
      continue;
    }
    pending.push(item);
  }
  if (pending.length > 0) result.push(...route(pending, ""));
  h.groupRoutes(result);
  return result;
}

/** The Gatehousefile syntax of the file server. */
export const syntax: SyntaxSet = {
  handlerDirectives: { file_server: parseFileServer },
  directives: { try_files: parseTryFiles },
};
