/**
 * `file_server` handler → `file_server [browse] { ... }`. The config file's own name, which
 * the adapter adds to `hide`, is left out (adapting adds the new file's name).
 *
 * @module
 */
import type { FileServerConfig } from "./config.ts";
import type { Token } from "../../../caddyfile/lexer.ts";
import type { Ctx, HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { childPath, isObject } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, statusText } from "../../../caddyfile/writer/tokens.ts";

const CONFIG_NAME = /(^|[/\\])(Gatehousefile|Caddyfile)$|\.(gatehousefile|caddyfile)$/i;

/** `file_server` → `file_server [browse] { ... }`. */
export const writer: HandlerReverser<FileServerConfig> = (f, ctx: Ctx) => {
  const block: Line[] = [];
  const args: Token[] = [];
  const fs = f.str("fs");
  if (fs !== undefined) block.push(line(["fs", fs]));
  const root = f.str("root");
  if (root !== undefined) block.push(line(["root", root]));
  let hide = f.strs("hide") ?? [];
  const last = hide[hide.length - 1];
  if (last !== undefined && CONFIG_NAME.test(last)) {
    hide = hide.slice(0, -1);
    ctx.fileHidden = last;
  }
  if (hide.length) block.push(line(["hide", ...hide]));
  const index = f.strs("index_names");
  if (index) block.push(line(["index", ...index]));
  const browse = f.obj("browse");
  if (browse) {
    const b: Line[] = [];
    const keys = Object.keys(browse);
    if (browse.reveal_symlinks === true) b.push(line(["reveal_symlinks"]));
    if (Array.isArray(browse.sort)) b.push(line(["sort", ...browse.sort.map(String)]));
    if (typeof browse.file_limit === "number") {
      b.push(line(["file_limit", String(browse.file_limit)]));
    }
    const tf = browse.template_file;
    const bad = keys.filter((k) =>
      !["reveal_symlinks", "sort", "file_limit", "template_file"].includes(k)
    );
    if (bad.length) {
      f.problems.add(
        childPath(f.at("browse"), bad[0]),
        "this browse option has no Gatehousefile form",
      );
      return null;
    }
    if (typeof tf !== "string" && b.length === 0) args.push(bare("browse"));
    else {block.push(
        line(["browse", ...(typeof tf === "string" ? [tf] : [])], b.length ? b : undefined),
      );}
  }
  const pre = f.strs("precompressed_order");
  const preMods = f.obj("precompressed");
  if (pre || preMods) {
    const names = Object.keys(preMods ?? {});
    const list = pre ?? [];
    if (
      list.length !== names.length ||
      !names.every((n) =>
        list.includes(n) && isObject(preMods![n]) && Object.keys(preMods![n] as object).length === 0
      )
    ) {
      f.problems.add(
        f.has("precompressed") ? f.at("precompressed") : f.at("precompressed_order"),
        "precompressed must configure exactly precompressed_order's formats, without options",
      );
      return null;
    }
    block.push(line(["precompressed", ...list]));
  }
  const status = statusText(f.take("status_code"));
  if (status !== undefined) block.push(line(["status", status]));
  if (f.bool("canonical_uris") === false) block.push(line(["disable_canonical_uris"]));
  if (f.bool("pass_thru") === true) block.push(line(["pass_thru"]));
  const etag = f.strs("etag_file_extensions");
  if (etag) block.push(line(["etag_file_extensions", ...etag]));
  return { name: "file_server", args, block: block.length ? block : undefined };
};
