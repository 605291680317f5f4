/**
 * `rewrite` handler → `rewrite` (a whole-URI rewrite, grouped by the adapter), `method`, or
 * `uri` (`strip_prefix`, `strip_suffix`, `replace`, `path_regexp`, `query`).
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { isObject } from "../../../caddyfile/writer/problems.ts";
import { type Line, line, word } from "../../../caddyfile/writer/tokens.ts";
import type { RewriteConfig } from "./config.ts";

/** `rewrite`. */
export const writer: HandlerReverser<RewriteConfig> = (f, ctx) => {
  const keys = f.rest();
  if (keys.length !== 1) {
    if (keys.length === 0) return { name: "uri", args: [] };
    f.problems.add(
      f.path,
      `a rewrite doing several things (${
        keys.join(", ")
      }) has no Gatehousefile form; each directive does one`,
    );
    return null;
  }
  const k = keys[0] as keyof RewriteConfig;
  const v = f.value[k];
  switch (k) {
    case "uri":
      if (typeof v !== "string") break;
      f.take(k);
      if (!ctx.inGroup) {
        // the rewrite directive always puts its route in a group
        f.problems.add(
          f.at(k),
          "a whole-URI rewrite outside a route group has no Gatehousefile form (rewrite always groups; try_files makes one only with a plain file matcher)",
        );
        return null;
      }
      return { name: "rewrite", args: [word(v)], starFirst: true };
    case "method":
      if (typeof v !== "string") break;
      f.take(k);
      return { name: "method", args: [word(v)] };
    case "strip_path_prefix":
    case "strip_path_suffix":
      if (typeof v !== "string") break;
      f.take(k);
      return {
        name: "uri",
        args: [word(k === "strip_path_prefix" ? "strip_prefix" : "strip_suffix"), word(v)],
      };
    case "uri_substring":
    case "path_regexp": {
      if (!Array.isArray(v) || v.length !== 1 || !isObject(v[0])) break;
      const r = v[0];
      f.take(k);
      if (k === "uri_substring") {
        const args = [word("replace"), word(String(r.find ?? "")), word(String(r.replace ?? ""))];
        if (typeof r.limit === "number" && r.limit !== 0) args.push(word(String(r.limit)));
        return { name: "uri", args };
      }
      return {
        name: "uri",
        args: [word("path_regexp"), word(String(r.find ?? "")), word(String(r.replace ?? ""))],
      };
    }
    case "query": {
      if (!isObject(v)) break;
      f.take(k);
      const block: Line[] = [];
      const pairs = (name: string) =>
        Array.isArray(v[name]) ? v[name] as Record<string, string>[] : [];
      for (const p of pairs("rename")) block.push(line([`${p.key}>${p.val}`]));
      for (const p of pairs("set")) block.push(line([p.key, p.val]));
      for (const p of pairs("add")) block.push(line(["+" + p.key, p.val]));
      for (const p of pairs("replace")) {
        block.push(line([String(p.key), String(p.search_regexp), String(p.replace)]));
      }
      for (const d of Array.isArray(v.delete) ? v.delete : []) block.push(line(["-" + d]));
      return { name: "uri", args: [word("query")], block };
    }
  }
  f.problems.add(f.at(k), `this rewrite has no Gatehousefile form`);
  return null;
};
