/**
 * The file server handler: settled once from a {@linkcode FileServerConfig} (templates
 * compiled, the listing template read), then each request resolves its file under the root,
 * answers a directory (index file, listing or 404), redirects to the canonical URI, and serves
 * the content: a whole small file from memory on the common path, otherwise through
 * `serve_content.ts` (conditions, ranges, precompressed sidecars).
 *
 * Nothing outside the root is served: the request path is cleaned as absolute, NUL bytes are
 * refused, and the resolved real path must stay inside the real root (symlinks pointing out are
 * 404). Contents and header values of small and medium files are kept in memory, validated by
 * one stat per request (`file_cache.ts`).
 *
 * @module
 */
import type { RequestContext } from "../../context.ts";
import { acceptedEncodings } from "../../encode.ts";
import { errorResponse, HandlerError, withoutStacks } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import {
  type BrowseOptions,
  DEFAULT_FILE_LIMIT,
  parseSort,
  readListing,
  renderListing,
  sortItems,
} from "./browse.ts";
import { DEFAULT_BROWSE_TEMPLATE } from "./browse_template.ts";
import { type FileServerConfig, PRECOMPRESSED_SUFFIX } from "./config.ts";
import { AbsentPaths, type CachedFile, FileCache, identityOf, sameFile } from "./file_cache.ts";
import { contentTypeFor } from "./mime.ts";
import {
  bodyOf,
  etagFromSidecar,
  fastHeaders,
  fileStream,
  fileTail,
  plainRequest,
  readExact,
  SMALL_FILE,
} from "./read.ts";
import { fileHidden, hasDotSegment, insideRoot, sanitizedPathJoin } from "./sanitize.ts";
import { type Content, serveContent } from "./serve_content.ts";

/** Contents held in memory per file_server handler (see file_cache.ts for validation). */
const CACHE_BYTES = 16 * 1024 * 1024;
/** Larger files are never held in memory. */
const CACHE_FILE_BYTES = 2 * 1024 * 1024;

/** The ETag Caddy computes: mtime (ns) and size in base 36. */
export function fileETag(info: Deno.FileInfo): string {
  const ns = BigInt(info.mtime?.getTime() ?? 0) * 1_000_000n;
  return `"${ns.toString(36)}${info.size.toString(36)}"`;
}

/** The file a request resolved to. */
interface Found {
  /** Its path (an index file's, for a directory that has one). */
  filename: string;
  info: Deno.FileInfo;
  /** The real path of the root. */
  realRoot: string;
  /** A directory's index file was chosen. */
  implicitIndex: boolean;
}

/** A `file_server` handler (see the module documentation). */
export class FileServer implements HttpHandler {
  readonly #root: Template;
  readonly #hide: readonly string[];
  readonly #hideDotfiles: boolean;
  readonly #indexNames: Template[];
  readonly #browse: BrowseOptions | null;
  readonly #canonical: boolean;
  readonly #status: Template | null;
  readonly #passThru: boolean;
  readonly #precompressed: ReadonlySet<string>;
  readonly #order: readonly string[];
  readonly #etagExts: readonly string[];
  readonly #realRoots = new Map<string, string | null>();
  // Real paths are remembered for a second: resolving one costs a system call per path
  // component. A remembered one is used only while the path still leads to the same file
  // (device and inode of the request's own stat), so a swapped link is resolved again.
  readonly #realCache = new Map<
    string,
    { real: string; dev: number; ino: number; until: number }
  >();
  readonly #cache = new FileCache(CACHE_BYTES, CACHE_FILE_BYTES);
  readonly #absent = new AbsentPaths();

  private constructor(c: FileServerConfig, browse: BrowseOptions | null) {
    this.#root = compileTemplate(c.root || "{http.vars.root}", { empty: "." });
    this.#hide = c.hide ?? [];
    // Ours: dotfiles (`.git/`, `.env`...) are not served unless `hide_dotfiles` is false.
    this.#hideDotfiles = c.hide_dotfiles ?? true;
    this.#indexNames = (c.index_names ?? ["index.html", "index.txt"]).map((n) =>
      compileTemplate(n)
    );
    this.#browse = browse;
    this.#canonical = c.canonical_uris ?? true;
    this.#status = c.status_code === undefined ? null : compileTemplate(String(c.status_code));
    this.#passThru = c.pass_thru ?? false;
    const pre = c.precompressed ?? {};
    this.#precompressed = new Set(Object.keys(pre));
    this.#order = c.precompressed_order ?? ["br", "zstd", "gzip"].filter((k) => k in pre);
    this.#etagExts = c.etag_file_extensions ?? [];
  }

  /** Settles a handler from its decoded config (reads the listing template, if one is named). */
  static async provision(c: FileServerConfig): Promise<FileServer> {
    let browse: BrowseOptions | null = null;
    if (c.browse) {
      const tf = c.browse.template_file;
      browse = {
        template: tf ? await Deno.readTextFile(tf) : DEFAULT_BROWSE_TEMPLATE,
        revealSymlinks: c.browse.reveal_symlinks ?? false,
        hide: c.hide ?? [],
        hideDotfiles: c.hide_dotfiles ?? true,
        fileLimit: c.browse.file_limit || DEFAULT_FILE_LIMIT,
        sort: parseSort(c.browse.sort ?? []),
      };
    }
    return new FileServer(c, browse);
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    // A dotfile answers as if it did not exist, before any file system access.
    if (this.#hideDotfiles && hasDotSegment(c.path)) return this.#notFound(c, next);
    const found = this.#find(c);
    if (found === null) return this.#notFound(c, next);
    if (found.info.isDirectory) return await this.#directory(c, next, found);
    if (fileHidden(found.filename, this.#hide)) return this.#notFound(c, next);
    const canonical = this.#canonicalRedirect(c, found.implicitIndex);
    if (canonical) return canonical;
    return this.#file(c, next, found, this.#override(c));
  }

  #notFound(c: RequestContext, next: Next): Response | Promise<Response> {
    if (this.#passThru) return next(c);
    return errorResponse(new HandlerError(404, "file not found", "file_server"));
  }

  /** The file under the root (a directory's index file when it has one), or null for 404. */
  #find(c: RequestContext): Found | null {
    const root = this.#root.render(c);
    let filename = sanitizedPathJoin(root, c.path);
    if (filename === null) return null;
    let info: Deno.FileInfo;
    // A failed stat throws, and a thrown Deno error costs several times a successful stat:
    // a path seen missing is answered by one stat of its unchanged directory.
    const known = this.#cache.has(filename);
    if (!known && this.#absent.check(filename)) return null;
    try {
      info = withoutStacks(() => Deno.statSync(filename!));
    } catch (e) {
      if (known) this.#cache.delete(filename);
      const n = errorName(e);
      if (n === "PermissionDenied") throw new HandlerError(403, "permission denied", "file_server");
      if (n === "NotFound" || n === "NotADirectory" || e instanceof TypeError) {
        if (n === "NotFound") this.#absent.remember(filename, Date.now());
        return null;
      }
      throw new HandlerError(500, (e as Error).message, "file_server");
    }
    const realRoot = this.#realRoot(root);
    if (realRoot === null) return null;
    let implicitIndex = false;
    if (info.isDirectory) {
      for (const t of this.#indexNames) {
        const idx = sanitizedPathJoin(filename, t.render(c));
        if (idx === null || fileHidden(idx, this.#hide)) continue;
        try {
          info = withoutStacks(() => Deno.statSync(idx));
          filename = idx;
          implicitIndex = true;
          break;
        } catch {
          continue;
        }
      }
    }
    if (!this.#contained(filename, realRoot, info)) return null;
    return { filename, info, realRoot, implicitIndex };
  }

  #realRoot(root: string): string | null {
    let r = this.#realRoots.get(root);
    if (r === undefined) {
      try {
        r = Deno.realPathSync(root);
      } catch {
        r = null;
      }
      if (this.#realRoots.size > 100) this.#realRoots.clear();
      this.#realRoots.set(root, r);
    }
    return r;
  }

  #contained(path: string, realRoot: string, info: Deno.FileInfo): boolean {
    const now = Date.now();
    const dev = info.dev ?? 0;
    const ino = info.ino ?? 0;
    const hit = this.#realCache.get(path);
    if (hit && hit.until > now && hit.dev === dev && hit.ino === ino) {
      return insideRoot(hit.real, realRoot);
    }
    try {
      const real = withoutStacks(() => Deno.realPathSync(path));
      if (this.#realCache.size > 10_000) this.#realCache.clear();
      this.#realCache.set(path, { real, dev, ino, until: now + 1000 });
      return insideRoot(real, realRoot);
    } catch {
      return false;
    }
  }

  /** A directory without an index file: its listing when browsing, else 404. */
  async #directory(c: RequestContext, next: Next, found: Found): Promise<Response> {
    const browse = this.#browse;
    if (!browse || fileHidden(found.filename, this.#hide)) return this.#notFound(c, next);
    if (
      this.#canonical && !c.origRawPath.endsWith("/") &&
      baseName(c.origRawPath) === baseName(c.rawPath)
    ) {
      return redirect(c, c.origRawPath + "/");
    }
    // the query's sort and order win over the configured ones
    const query = new URLSearchParams(c.query);
    if (!query.get("sort") && browse.sort.by) query.set("sort", browse.sort.by);
    if (!query.get("order") && browse.sort.order) query.set("order", browse.sort.order);
    const items = sortItems(await readListing(found.filename, browse, found.realRoot), query);
    const h = new Headers();
    const status = this.#status ? Number(this.#status.render(c)) : c.error ? c.error.status : 200;
    if ((c.headers.get("accept") ?? "").includes("application/json")) {
      h.set("content-type", "application/json; charset=utf-8");
      return new Response(JSON.stringify(items), { status, headers: h });
    }
    h.set("content-type", "text/html; charset=utf-8");
    return new Response(
      renderListing(browse.template, c.path, items, query, browse.revealSymlinks),
      { status, headers: h },
    );
  }

  /** The redirect that adds or removes a trailing slash, when the URI is not canonical. */
  #canonicalRedirect(c: RequestContext, implicitIndex: boolean): Response | null {
    if (!this.#canonical || baseName(c.origRawPath) !== baseName(c.rawPath)) return null;
    if (implicitIndex && !c.origRawPath.endsWith("/")) return redirect(c, c.origRawPath + "/");
    if (!implicitIndex && c.origRawPath.endsWith("/")) {
      return redirect(c, c.origRawPath.slice(0, -1));
    }
    return null;
  }

  /** The status to answer with: `status_code`, the error's when serving one, else 0 (200). */
  #override(c: RequestContext): number {
    if (!this.#status) return c.error ? c.error.status : 0;
    const status = Number(this.#status.render(c));
    if (!Number.isInteger(status)) {
      throw new HandlerError(500, "invalid status code", "file_server");
    }
    return status;
  }

  /** Serves a file. */
  #file(
    c: RequestContext,
    next: Next,
    found: Found,
    override: number,
  ): Response | Promise<Response> {
    const { filename, info } = found;
    const hit = this.#cache.get(filename, info);
    if (
      hit && override === 0 && c.method === "GET" && hit.type !== undefined &&
      this.#etagExts.length === 0 &&
      !(this.#order.length && c.headers.has("accept-encoding")) && plainRequest(c.headers) &&
      !c.respHeaders?.has("content-type")
    ) {
      return this.#whole(c, filename, hit);
    }
    const h = new Headers();
    let servePath = filename;
    let serveInfo = info;
    if (this.#order.length) {
      const side = this.#sidecar(c, found, h);
      if (side) [servePath, serveInfo] = side;
    }
    const entry = servePath === filename ? hit : this.#cache.get(servePath, serveInfo);
    h.set(
      "etag",
      (this.#etagExts.length ? etagFromSidecar(servePath, this.#etagExts) : null) ??
        (entry ? entry.etag : fileETag(serveInfo)),
    );
    const type = c.respHeaders?.get("content-type") ?? contentTypeFor(filename);
    if (type) h.set("content-type", type);
    let content: Content;
    try {
      content = this.#content(c, servePath, serveInfo, entry);
    } catch (e) {
      if (errorName(e) === "NotFound") return this.#notFound(c, next);
      throw new HandlerError(
        errorName(e) === "PermissionDenied" ? 403 : 500,
        String(e),
        "file_server",
      );
    }
    return serveContent(c.headers, c.method, h, content, override);
  }

  /** The common case: a whole cached file, no conditions, no ranges, no sidecars. */
  #whole(c: RequestContext, filename: string, hit: CachedFile): Response {
    if (c.serverHeader) {
      // A prepared response is cloned: Deno keeps its header list and shares its body; every
      // header is there, so the server need not copy the list to add `Server`.
      c.headersFinal = true;
      return this.#cache.prepare(filename, hit, () =>
        new Response(hit.data as BodyInit, {
          headers: [...fastHeaders(hit), ["server", "Gatehouse"]],
        })).clone();
    }
    return new Response(bodyOf(hit.data) as BodyInit, { headers: fastHeaders(hit) });
  }

  /** The first precompressed sidecar the client accepts, with its encoding set on `h`. */
  #sidecar(c: RequestContext, found: Found, h: Headers): [string, Deno.FileInfo] | null {
    const encodings = acceptedEncodings(
      c.headers.get("accept-encoding"),
      this.#order,
      c.headers.get("sec-websocket-key"),
    );
    for (const enc of encodings) {
      if (!this.#precompressed.has(enc)) continue;
      const side = found.filename + PRECOMPRESSED_SUFFIX[enc];
      try {
        const si = withoutStacks(() => Deno.statSync(side));
        if (si.isDirectory || !this.#contained(side, found.realRoot, si)) continue;
        h.set("content-encoding", enc);
        h.append("vary", "Accept-Encoding");
        return [side, si];
      } catch {
        continue;
      }
    }
    return null;
  }

  /** The file's content: from memory (cached, or small enough to read), else streamed. */
  #content(
    c: RequestContext,
    path: string,
    info: Deno.FileInfo,
    entry: CachedFile | undefined,
  ): Content {
    const size = info.size;
    const now = Date.now();
    if (entry || (c.method !== "HEAD" && (size <= SMALL_FILE || this.#cache.admits(info, now)))) {
      const data = entry ? entry.data : this.#readAndCache(path, info, now);
      return {
        size: data.length,
        mtime: info.mtime,
        lastModified: entry?.lastModified ?? undefined,
        read: (s, l) => s === 0 && l === data.length ? bodyOf(data) : data.subarray(s, s + l),
      };
    }
    return {
      size,
      mtime: info.mtime,
      // A whole file, and a single range to its end, go out as the file's own readable stream
      // (seeked to the range's start), which Deno's server reads and writes natively; other
      // ranges and multipart parts use a JS stream that stops at the range end.
      read: (s, l) => fileStream(path, s, l),
      tail: (s) => fileTail(path, s),
    };
  }

  /** Reads a whole file; keeps it when the cache admits it and it did not change meanwhile. */
  #readAndCache(path: string, info: Deno.FileInfo, now: number): Uint8Array {
    const { data, after } = readExact(path, info.size);
    if (
      data.length === info.size && this.#cache.admits(info, now) && after &&
      sameFile(identityOf(info), after)
    ) {
      this.#cache.set(path, {
        ...identityOf(info),
        data,
        etag: fileETag(info),
        lastModified: info.mtime && info.mtime.getTime() > 0 ? info.mtime.toUTCString() : null,
        length: String(data.length),
        type: contentTypeFor(path),
      });
    }
    return data;
  }
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

function baseName(p: string): string {
  const t = p.endsWith("/") && p.length > 1 ? p.slice(0, -1) : p;
  return t.slice(t.lastIndexOf("/") + 1);
}
