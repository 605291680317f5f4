/**
 * The config of `http.handlers.file_server`, field by field as Caddy's `FileServer`
 * (`modules/caddyhttp/fileserver/staticfiles.go`), and its decoder. The JSON decoder, the
 * Gatehousefile directive (`caddyfile.ts`), the JSON → Gatehousefile writer (`writer.ts`) and
 * `gatehouse file-server` all make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/** Directory listings (`browse`). */
export interface BrowseConfig {
  /** A Go-template-style HTML file for listings; the built-in template when absent. */
  template_file?: string;
  /** Show where symbolic links point. */
  reveal_symlinks?: boolean;
  /** Default sort: `[by]` or `[by, order]` (`name`, `namedirfirst`, `size`, `time`; `asc`, `desc`). */
  sort?: string[];
  /** Most entries listed (0: the default, 10,000). */
  file_limit?: number;
}

/** `http.handlers.file_server`. */
export type FileServerConfig = {
  /** The module name. */
  handler: "file_server";
  /** The file system: only the local disk (`""` or `{http.vars.fs}`) is available. */
  fs?: string;
  /** The site root (placeholders allowed); `{http.vars.root}`, else the working directory. */
  root?: string;
  /** Files and folders never served nor listed (glob patterns; paths without a slash match any base name). */
  hide?: string[];
  /** Files tried, in order, for a directory (default `index.html`, `index.txt`; placeholders allowed). */
  index_names?: string[];
  /** List directories that have no index file. */
  browse?: BrowseConfig;
  /** Redirect to add or remove the trailing slash of directories and files (default true). */
  canonical_uris?: boolean;
  /** The status of the answer (a number or a placeholder); the error's when serving an error, else 200. */
  status_code?: string | number;
  /** Call the next handler instead of answering 404 for a missing file. */
  pass_thru?: boolean;
  /** Precompressed sidecar files served for the encodings a client accepts (`gzip`, `br`, `zstd`; no options). */
  precompressed?: Record<string, Record<string, never>>;
  /** The order the precompressed formats are tried in (default `br`, `zstd`, `gzip` among the configured). */
  precompressed_order?: string[];
  /** Read the ETag from the first `<file><ext>` sidecar that exists (e.g. `.etag`). */
  etag_file_extensions?: string[];
  /** Ours: paths with a segment starting with a dot (`.well-known` excepted) are 404 and unlisted (default true). */
  hide_dotfiles?: boolean;
};

/** The fields of {@linkcode FileServerConfig}. */
export const FILE_SERVER_FIELDS: readonly (keyof FileServerConfig)[] = [
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
];

const BROWSE_FIELDS: readonly (keyof BrowseConfig)[] = [
  "template_file",
  "reveal_symlinks",
  "file_limit",
  "sort",
];

/** The precompressed formats and their sidecar suffixes. */
export const PRECOMPRESSED_SUFFIX: Readonly<Record<string, string>> = {
  gzip: ".gz",
  br: ".br",
  zstd: ".zst",
};

/**
 * Decodes and checks a `file_server` config (types, known fields, the file system, the
 * precompressed formats, the listing limit); nothing is read from disk here.
 *
 * @example
 * ```ts
 * import { decodeFileServer } from "./config.ts";
 * decodeFileServer({ handler: "file_server", root: "/srv", browse: {} }).root; // "/srv"
 * ```
 */
export function decodeFileServer(raw: Raw): FileServerConfig {
  const d = new Decoder(raw, "http.handlers.file_server").fields(FILE_SERVER_FIELDS);
  const out: FileServerConfig = { handler: "file_server" };
  const fs = d.string("fs");
  if (fs !== undefined) {
    if (fs !== "" && fs !== "{http.vars.fs}") {
      d.failAt("fs", `file system ${JSON.stringify(fs)} is not available (only the local disk)`);
    }
    out.fs = fs;
  }
  const root = d.string("root");
  if (root !== undefined) out.root = root;
  const hide = d.strings("hide");
  if (hide) out.hide = hide;
  const index = d.strings("index_names");
  if (index) out.index_names = index;
  const browse = d.object("browse");
  if (browse) {
    browse.fields(BROWSE_FIELDS);
    const b: BrowseConfig = {};
    const tf = browse.string("template_file");
    if (tf !== undefined) b.template_file = tf;
    const rs = browse.bool("reveal_symlinks");
    if (rs !== undefined) b.reveal_symlinks = rs;
    const limit = browse.number("file_limit");
    if (limit !== undefined) {
      if (!Number.isInteger(limit) || limit < 0) {
        browse.failAt("file_limit", "must be a whole number >= 0");
      }
      b.file_limit = limit;
    }
    const sort = browse.strings("sort");
    if (sort) b.sort = sort;
    out.browse = b;
  }
  const canonical = d.bool("canonical_uris");
  if (canonical !== undefined) out.canonical_uris = canonical;
  const status = d.value("status_code");
  if (status !== undefined && status !== null) {
    if (typeof status === "string" || typeof status === "number") out.status_code = status;
    else d.failAt("status_code", "must be a number or a string");
  }
  const passThru = d.bool("pass_thru");
  if (passThru !== undefined) out.pass_thru = passThru;
  const pre = d.object("precompressed");
  if (pre) {
    for (const k of Object.keys(pre.raw)) {
      if (!PRECOMPRESSED_SUFFIX[k]) d.fail(`unknown precompressed ${k}`);
      pre.object(k)?.fields([]);
    }
    out.precompressed = Object.fromEntries(Object.keys(pre.raw).map((k) => [k, {}]));
  }
  const order = d.strings("precompressed_order");
  if (order) out.precompressed_order = order;
  const etag = d.strings("etag_file_extensions");
  if (etag) out.etag_file_extensions = etag;
  const dot = d.bool("hide_dotfiles");
  if (dot !== undefined) out.hide_dotfiles = dot;
  return out;
}
