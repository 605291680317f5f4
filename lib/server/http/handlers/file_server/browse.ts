/**
 * Directory listings for `file_server` with `browse`: at most `file_limit` entries read
 * (default 10000), hidden ones left out, sorted by the query's `sort` (`name`,
 * `namedirfirst`, `size`, `time`) and `order` (`asc`, `desc`), or else by the configured
 * `sort`, cut by `offset` and `limit`, rendered as JSON when the client accepts `application/json`, else
 * as HTML from a template. Symlink targets appear only with `reveal_symlinks`.
 *
 * @module
 */
import { fileHidden, insideRoot, isDotName } from "./sanitize.ts";

/** One listed entry (JSON field names as Caddy's). */
export interface ListingItem {
  name: string;
  size: number;
  url: string;
  mod_time: string;
  mode: number;
  is_dir: boolean;
  is_symlink: boolean;
  symlink_path?: string;
}

/** Options of the listing. */
export interface BrowseOptions {
  /** Template text (see browse_template.ts). */
  template: string;
  /** Show symlink targets. */
  revealSymlinks: boolean;
  /** Patterns of hidden files. */
  hide: readonly string[];
  /** Leave out names starting with a dot (`.well-known` excepted). */
  hideDotfiles: boolean;
  /** `file_limit`: at most this many directory entries are read, in directory order. */
  fileLimit: number;
  /** `sort`: the default sort key and order when the query names none. */
  sort: { by: string; order: string };
}

/** Entries read per directory when `file_limit` is not set (as Caddy). */
export const DEFAULT_FILE_LIMIT = 10000;

const SORT_KEYS = ["name", "namedirfirst", "size", "time"];

/** Decodes browse `sort` (`[key]`, `[order]` or both, e.g. `["size", "desc"]`). */
export function parseSort(list: readonly string[]): { by: string; order: string } {
  const out = { by: "", order: "" };
  for (const item of list.slice(0, 2)) {
    if (SORT_KEYS.includes(item)) out.by = item;
    else if (item === "asc" || item === "desc") out.order = item;
  }
  return out;
}

/**
 * Reads a directory into listing items. With `realRoot` (the root's real path), a symlink
 * whose target lies outside it is left out, as it is not served: its target's size, time and
 * kind never show.
 */
export async function readListing(
  dir: string,
  opts: BrowseOptions,
  realRoot?: string,
): Promise<ListingItem[]> {
  const items: ListingItem[] = [];
  let read = 0;
  for await (const e of Deno.readDir(dir)) {
    if (read++ >= opts.fileLimit) break;
    const full = `${dir.replace(/\/$/, "")}/${e.name}`;
    if (opts.hideDotfiles && isDotName(e.name)) continue;
    if (fileHidden(full, opts.hide)) continue;
    if (e.isSymlink && realRoot !== undefined) {
      try {
        if (!insideRoot(await Deno.realPath(full), realRoot)) continue;
      } catch {
        // a dangling link: listed from its own entry below
      }
    }
    let info: Deno.FileInfo | null = null;
    try {
      info = await Deno.stat(full);
    } catch {
      try {
        info = await Deno.lstat(full);
      } catch {
        continue;
      }
    }
    const isDir = info.isDirectory;
    const item: ListingItem = {
      name: e.name + (isDir ? "/" : ""),
      size: isDir ? 0 : info.size,
      url: `./${encodeURIComponent(e.name).replace(/%2F/g, "/")}${isDir ? "/" : ""}`,
      mod_time: (info.mtime ?? new Date(0)).toISOString(),
      mode: info.mode ?? 0,
      is_dir: isDir,
      is_symlink: e.isSymlink,
    };
    if (e.isSymlink && opts.revealSymlinks) {
      try {
        item.symlink_path = await Deno.readLink(full);
      } catch {
        // unreadable link: leave the target out
      }
    }
    items.push(item);
  }
  return items;
}

/** Sorts and cuts items as the query asks. */
export function sortItems(items: ListingItem[], query: URLSearchParams): ListingItem[] {
  const sort = query.get("sort") || "namedirfirst";
  const desc = query.get("order") === "desc";
  const byName = (a: ListingItem, b: ListingItem) =>
    a.name.toLowerCase() < b.name.toLowerCase()
      ? -1
      : a.name.toLowerCase() > b.name.toLowerCase()
      ? 1
      : 0;
  const cmp: Record<string, (a: ListingItem, b: ListingItem) => number> = {
    name: byName,
    namedirfirst: (a, b) => a.is_dir === b.is_dir ? byName(a, b) : a.is_dir ? -1 : 1,
    size: (a, b) => a.size - b.size || byName(a, b),
    time: (a, b) => a.mod_time.localeCompare(b.mod_time) || byName(a, b),
  };
  const f = cmp[sort] ?? cmp.namedirfirst;
  let out = [...items].sort(f);
  if (desc) {
    out = sort === "namedirfirst"
      ? [...out.filter((i) => i.is_dir).reverse(), ...out.filter((i) => !i.is_dir).reverse()]
      : out.reverse();
  }
  const offset = Math.max(0, Number(query.get("offset")) || 0);
  const limit = Number(query.get("limit")) || 0;
  out = out.slice(offset);
  if (limit > 0) out = out.slice(0, limit);
  return out;
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  )
    .replace(/'/g, "&#39;");
}

function humanSize(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** Renders the HTML listing page. */
export function renderListing(
  template: string,
  urlPath: string,
  items: ListingItem[],
  query: URLSearchParams,
  revealSymlinks: boolean,
): string {
  const segs = urlPath.split("/").filter(Boolean);
  let acc = "/";
  const crumbs = [`<a href="/">/</a>`];
  for (const s of segs) {
    acc += encodeURIComponent(s) + "/";
    crumbs.push(`<a href="${esc(acc)}">${esc(s)}</a>/`);
  }
  const dirs = items.filter((i) => i.is_dir).length;
  const files = items.length - dirs;
  const sort = query.get("sort") || "namedirfirst";
  const order = query.get("order") === "desc" ? "desc" : "asc";
  const link = (key: string, label: string) => {
    const active = sort === key || (key === "name" && sort === "namedirfirst");
    const next = active && order === "asc" ? "desc" : "asc";
    return `<a href="?sort=${key}&amp;order=${next}">${label}${
      active ? (order === "asc" ? " ↑" : " ↓") : ""
    }</a>`;
  };
  const rows = [
    ...(segs.length
      ? [`<tr class="dir"><td><a href="..">⬑ Up</a></td><td></td><td></td></tr>`]
      : []),
    ...items.map((i) => {
      const target = i.is_symlink && revealSymlinks && i.symlink_path
        ? ` <span class="link">→ ${esc(i.symlink_path)}</span>`
        : "";
      return `<tr class="${i.is_dir ? "dir" : "file"}"><td><a href="${esc(i.url)}">${
        esc(i.name)
      }</a>${target}</td>` +
        `<td class="size">${i.is_dir ? "—" : humanSize(i.size)}</td>` +
        `<td class="time"><time datetime="${i.mod_time}">${
          i.mod_time.replace("T", " ").slice(0, 19)
        }</time></td></tr>`;
    }),
  ].join("\n");
  const values: Record<string, string> = {
    title: esc(urlPath),
    breadcrumbs: crumbs.join(""),
    summary: `${dirs} director${dirs === 1 ? "y" : "ies"}, ${files} file${files === 1 ? "" : "s"}`,
    rows,
    sort_name: link("name", "Name"),
    sort_size: link("size", "Size"),
    sort_time: link("time", "Modified"),
  };
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (m, k: string) => values[k] ?? m);
}
