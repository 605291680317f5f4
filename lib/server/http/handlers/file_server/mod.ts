/**
 * `file_server`: serves files under `root` (placeholders allowed; default `{http.vars.root}`
 * or the working directory). Options as Caddy's: `hide`, `index_names` (default
 * `index.html`, `index.txt`), `browse` (`template_file`, `reveal_symlinks`),
 * `canonical_uris` (308 to add/remove the trailing slash), `status_code`, `pass_thru`
 * (call the next handler instead of 404), `precompressed` (`gzip`, `br`, `zstd` sidecar
 * files) with `precompressed_order`, `etag_file_extensions` (the ETag is read from the first
 * `<file><ext>` sidecar that exists); ours: `hide_dotfiles` (default true: paths with a
 * segment starting with a dot, `.well-known` excepted, are 404 and left out of listings). Nothing outside the root is served: the request path is
 * cleaned as absolute, NUL bytes are refused, and the resolved real path must stay inside
 * the real root (symlinks pointing out are 404). Contents and header values of small and
 * medium files are kept in memory, validated by one stat per request (file_cache.ts).
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import {
  asObject,
  checkFields,
  optBool,
  optNumber,
  optObject,
  optString,
  optStrings,
} from "../../config.ts";
import type { RequestContext } from "../../context.ts";
import { acceptedEncodings } from "../../encode.ts";
import { errorResponse, HandlerError, withoutStacks } from "../../errors.ts";
import { ConfigError } from "../../../config/error.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileTemplate } from "../../replacer.ts";
import {
  type BrowseOptions,
  DEFAULT_FILE_LIMIT,
  parseSort,
  readListing,
  renderListing,
  sortItems,
} from "./browse.ts";
import { DEFAULT_BROWSE_TEMPLATE } from "./browse_template.ts";
import { AbsentPaths, type CachedFile, FileCache, identityOf, sameFile } from "./file_cache.ts";
import { contentTypeFor } from "./mime.ts";
import {
  bodyOf,
  etagFromSidecar,
  fastHeaders,
  fileStream,
  plainRequest,
  readExact,
  SMALL_FILE,
} from "./read.ts";
import { fileHidden, hasDotSegment, insideRoot, sanitizedPathJoin } from "./sanitize.ts";
import { type Content, serveContent } from "./serve_content.ts";

const SUFFIX: Record<string, string> = { gzip: ".gz", br: ".br", zstd: ".zst" };
/** Contents held in memory per file_server handler (see file_cache.ts for validation). */
const CACHE_BYTES = 16 * 1024 * 1024;
/** Larger files are never held in memory. */
const CACHE_FILE_BYTES = 2 * 1024 * 1024;

/** The ETag Caddy computes: mtime (ns) and size in base 36. */
export function fileETag(info: Deno.FileInfo): string {
  const ns = BigInt(info.mtime?.getTime() ?? 0) * 1_000_000n;
  return `"${ns.toString(36)}${info.size.toString(36)}"`;
}

function redirect(c: RequestContext, to: string): Response {
  while (to.startsWith("//")) to = "/" + to.replace(/^\/+/, "");
  if (c.query) to += "?" + c.query;
  const headers = new Headers({ location: to });
  let body: string | null = null;
  if (c.method === "GET" || c.method === "HEAD") {
    headers.set("content-type", "text/html; charset=utf-8");
    body = `<a href="${
      to.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;")
        .replace(/'/g, "&#39;")
    }">Permanent Redirect</a>.\n\n`;
  }
  return new Response(body, { status: 308, headers });
}

function errorName(e: unknown): string {
  return e instanceof Error ? e.name : "";
}

/** Registry entry. */
export const fileServerModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.file_server",
  async create(config) {
    const where = "http.handlers.file_server";
    checkFields(config, [
      "handler",
      "fs",
      "root",
      "hide",
      "index_names",
      "browse",
      "canonical_uris",
      "status_code",
      "pass_thru",
      "precompressed",
      "precompressed_order",
      "hide_dotfiles",
      "etag_file_extensions",
    ], where);
    const rootT = compileTemplate(optString(config, "root", where) || "{http.vars.root}", {
      empty: ".",
    });
    const hide = optStrings(config, "hide", where) ?? [];
    // Ours: dotfiles (`.git/`, `.env`...) are not served unless `hide_dotfiles` is false.
    const hideDotfiles = optBool(config, "hide_dotfiles", where) ?? true;
    const indexNames = (optStrings(config, "index_names", where) ?? ["index.html", "index.txt"])
      .map((n) => compileTemplate(n));
    const browseRaw = optObject(config, "browse", where);
    let browse: BrowseOptions | null = null;
    if (browseRaw) {
      const w = `${where}.browse`;
      checkFields(browseRaw, ["template_file", "reveal_symlinks", "file_limit", "sort"], w);
      const tf = optString(browseRaw, "template_file", w);
      const limit = optNumber(browseRaw, "file_limit", w) ?? 0;
      if (!Number.isInteger(limit) || limit < 0) {
        throw new ConfigError("invalid_config", `${w}.file_limit: must be a whole number >= 0`);
      }
      browse = {
        template: tf ? await Deno.readTextFile(tf) : DEFAULT_BROWSE_TEMPLATE,
        revealSymlinks: optBool(browseRaw, "reveal_symlinks", w) ?? false,
        hide,
        hideDotfiles,
        fileLimit: limit || DEFAULT_FILE_LIMIT,
        sort: parseSort(optStrings(browseRaw, "sort", w) ?? []),
      };
    }
    const canonical = optBool(config, "canonical_uris", where) ?? true;
    const statusRaw = config.status_code;
    const statusT = statusRaw === undefined ? null : compileTemplate(String(statusRaw));
    const passThru = optBool(config, "pass_thru", where) ?? false;
    const pre = optObject(config, "precompressed", where) ?? {};
    for (const k of Object.keys(pre)) {
      if (!SUFFIX[k]) {
        throw new ConfigError("invalid_config", `${where}: unknown precompressed ${k}`);
      }
      if (pre[k] !== null) asObject(pre[k], `${where}.precompressed.${k}`);
    }
    const order = optStrings(config, "precompressed_order", where) ??
      ["br", "zstd", "gzip"].filter((k) => k in pre);
    const etagExts = optStrings(config, "etag_file_extensions", where) ?? [];
    const fs = optString(config, "fs", where) ?? "";
    if (fs !== "" && fs !== "{http.vars.fs}") {
      throw new ConfigError(
        "invalid_config",
        `${where}.fs: file system ${JSON.stringify(fs)} is not available (only the local disk)`,
      );
    }
    const realRoots = new Map<string, string | null>();

    function realRoot(root: string): string | null {
      let r = realRoots.get(root);
      if (r === undefined) {
        try {
          r = Deno.realPathSync(root);
        } catch {
          r = null;
        }
        if (realRoots.size > 100) realRoots.clear();
        realRoots.set(root, r);
      }
      return r;
    }

    // Real paths are remembered for a second: resolving one costs a system call per path
    // component. A remembered one is used only while the path still leads to the same file
    // (device and inode of the request's own stat), so a swapped link is resolved again.
    const realCache = new Map<string, { real: string; dev: number; ino: number; until: number }>();
    function contained(path: string, rr: string, info: Deno.FileInfo): boolean {
      const now = Date.now();
      const dev = info.dev ?? 0;
      const ino = info.ino ?? 0;
      const hit = realCache.get(path);
      if (hit && hit.until > now && hit.dev === dev && hit.ino === ino) {
        return insideRoot(hit.real, rr);
      }
      try {
        const real = withoutStacks(() => Deno.realPathSync(path));
        if (realCache.size > 10_000) realCache.clear();
        realCache.set(path, { real, dev, ino, until: now + 1000 });
        return insideRoot(real, rr);
      } catch {
        return false;
      }
    }

    const cache = new FileCache(CACHE_BYTES, CACHE_FILE_BYTES);
    const absent = new AbsentPaths();

    /** Reads a whole file; keeps it when the cache admits it and it did not change meanwhile. */
    function readAndCache(path: string, info: Deno.FileInfo, now: number): Uint8Array {
      const { data, after } = readExact(path, info.size);
      if (
        data.length === info.size && cache.admits(info, now) && after &&
        sameFile(identityOf(info), after)
      ) {
        const entry: CachedFile = {
          ...identityOf(info),
          data,
          etag: fileETag(info),
          lastModified: info.mtime && info.mtime.getTime() > 0 ? info.mtime.toUTCString() : null,
          length: String(data.length),
          type: contentTypeFor(path),
        };
        cache.set(path, entry);
      }
      return data;
    }

    function notFound(c: RequestContext, next: Next): Response | Promise<Response> {
      if (passThru) return next(c);
      return errorResponse(new HandlerError(404, "file not found", "file_server"));
    }

    return {
      async serveHTTP(c, next) {
        // A dotfile answers as if it did not exist, before any file system access.
        if (hideDotfiles && hasDotSegment(c.path)) return notFound(c, next);
        const root = rootT.render(c);
        let filename = sanitizedPathJoin(root, c.path);
        if (filename === null) return notFound(c, next);
        let info: Deno.FileInfo;
        // A failed stat throws, and a thrown Deno error costs several times a successful stat:
        // a path seen missing is answered by one stat of its unchanged directory.
        const known = cache.has(filename);
        if (!known && absent.check(filename)) return notFound(c, next);
        try {
          info = withoutStacks(() => Deno.statSync(filename!));
        } catch (e) {
          if (known) cache.delete(filename);
          const n = errorName(e);
          if (n === "PermissionDenied") {
            throw new HandlerError(403, "permission denied", "file_server");
          }
          if (n === "NotFound" || n === "NotADirectory" || e instanceof TypeError) {
            if (n === "NotFound") absent.remember(filename, Date.now());
            return notFound(c, next);
          }
          throw new HandlerError(500, (e as Error).message, "file_server");
        }
        const rr = realRoot(root);
        if (rr === null) return notFound(c, next);
        let implicitIndex = false;
        if (info.isDirectory) {
          for (const t of indexNames) {
            const idx = sanitizedPathJoin(filename, t.render(c));
            if (idx === null || fileHidden(idx, hide)) continue;
            try {
              const ii = withoutStacks(() => Deno.statSync(idx));
              info = ii;
              filename = idx;
              implicitIndex = true;
              break;
            } catch {
              continue;
            }
          }
        }
        if (!contained(filename, rr, info)) return notFound(c, next);
        if (info.isDirectory) {
          if (browse && !fileHidden(filename, hide)) {
            if (
              canonical && !c.origRawPath.endsWith("/") &&
              baseName(c.origRawPath) === baseName(c.rawPath)
            ) {
              return redirect(c, c.origRawPath + "/");
            }
            // the query's sort and order win over the configured ones
            const query = new URLSearchParams(c.query);
            if (!query.get("sort") && browse.sort.by) query.set("sort", browse.sort.by);
            if (!query.get("order") && browse.sort.order) query.set("order", browse.sort.order);
            const items = sortItems(await readListing(filename, browse, rr), query);
            const h = new Headers();
            const status = statusT ? Number(statusT.render(c)) : c.error ? c.error.status : 200;
            if ((c.headers.get("accept") ?? "").includes("application/json")) {
              h.set("content-type", "application/json; charset=utf-8");
              return new Response(JSON.stringify(items), { status, headers: h });
            }
            h.set("content-type", "text/html; charset=utf-8");
            return new Response(
              renderListing(
                browse.template,
                c.path,
                items,
                query,
                browse.revealSymlinks,
              ),
              { status, headers: h },
            );
          }
          return notFound(c, next);
        }
        if (fileHidden(filename, hide)) return notFound(c, next);
        if (canonical && baseName(c.origRawPath) === baseName(c.rawPath)) {
          if (implicitIndex && !c.origRawPath.endsWith("/")) {
            return redirect(c, c.origRawPath + "/");
          }
          if (!implicitIndex && c.origRawPath.endsWith("/")) {
            return redirect(c, c.origRawPath.slice(0, -1));
          }
        }
        let override = c.error ? c.error.status : 0;
        if (statusT) {
          override = Number(statusT.render(c));
          if (!Number.isInteger(override)) {
            throw new HandlerError(500, "invalid status code", "file_server");
          }
        }
        const hit = cache.get(filename, info);
        if (
          hit && override === 0 && c.method === "GET" && hit.type !== undefined &&
          etagExts.length === 0 &&
          !(order.length && c.headers.has("accept-encoding")) && plainRequest(c.headers) &&
          !c.respHeaders?.has("content-type")
        ) {
          // The common case: a whole cached file, no conditions, no ranges, no sidecars.
          if (c.serverHeader) {
            // A prepared response is cloned: Deno keeps its header list and shares its body.
            c.headersFinal = true;
            return cache.prepare(filename, hit, () =>
              new Response(hit.data as BodyInit, {
                headers: [...fastHeaders(hit), ["server", "Gatehouse"]],
              })).clone();
          }
          const hs = fastHeaders(hit);
          if (c.serverHeader) {
            // Every header is here: the server need not copy the list to add `Server`.
            hs.push(["server", "Gatehouse"]);
            c.headersFinal = true;
          }
          return new Response(bodyOf(hit.data) as BodyInit, { headers: hs });
        }
        const h = new Headers();
        let servePath = filename;
        let serveInfo = info;
        if (order.length) {
          for (
            const enc of acceptedEncodings(
              c.headers.get("accept-encoding"),
              order,
              c.headers.get("sec-websocket-key"),
            )
          ) {
            if (!(enc in pre)) continue;
            const side = filename + SUFFIX[enc];
            try {
              const si = withoutStacks(() => Deno.statSync(side));
              if (si.isDirectory || !contained(side, rr, si)) continue;
              servePath = side;
              serveInfo = si;
              h.set("content-encoding", enc);
              h.append("vary", "Accept-Encoding");
              break;
            } catch {
              continue;
            }
          }
        }
        const entry = servePath === filename ? hit : cache.get(servePath, serveInfo);
        h.set(
          "etag",
          (etagExts.length ? etagFromSidecar(servePath, etagExts) : null) ??
            (entry ? entry.etag : fileETag(serveInfo)),
        );
        const preType = c.respHeaders?.get("content-type");
        const type = preType ?? contentTypeFor(filename);
        if (type) h.set("content-type", type);
        const size = serveInfo.size;
        let content: Content;
        const now = Date.now();
        if (
          entry ||
          (c.method !== "HEAD" && (size <= SMALL_FILE || cache.admits(serveInfo, now)))
        ) {
          let data: Uint8Array;
          if (entry) data = entry.data;
          else {
            try {
              data = readAndCache(servePath, serveInfo, now);
            } catch (e) {
              if (errorName(e) === "NotFound") return notFound(c, next);
              throw new HandlerError(
                errorName(e) === "PermissionDenied" ? 403 : 500,
                String(e),
                "file_server",
              );
            }
          }
          content = {
            size: data.length,
            mtime: serveInfo.mtime,
            lastModified: entry?.lastModified ?? undefined,
            read: (s, l) => s === 0 && l === data.length ? bodyOf(data) : data.subarray(s, s + l),
          };
        } else {
          content = {
            size,
            mtime: serveInfo.mtime,
            // A whole file goes out as the file's own readable stream, which Deno's server
            // copies natively; ranges use a JS stream that stops at the range end.
            read: (s, l) =>
              s === 0 && l === size
                ? Deno.openSync(servePath, { read: true }).readable
                : fileStream(servePath, s, l),
          };
        }
        return serveContent(c.headers, c.method, h, content, override);
      },
    };
  },
};

function baseName(p: string): string {
  const t = p.endsWith("/") && p.length > 1 ? p.slice(0, -1) : p;
  return t.slice(t.lastIndexOf("/") + 1);
}
