/**
 * The CGI environment of a FastCGI request (RFC 3875 section 4.1, with the variables PHP
 * applications expect), built the way Caddy's fastcgi transport builds it: the path split
 * into `SCRIPT_NAME` and `PATH_INFO` after a `split_path` extension, `SCRIPT_FILENAME` the
 * script joined to the root without climbing out of it, `REQUEST_URI` the original request's
 * URI, `HTTPS`/`SSL_*` for TLS requests, the configured `env` (placeholders rendered), and
 * every request header as `HTTP_<NAME>` except `Proxy` (httpoxy). A header whose name holds
 * `_` or `.` (the server drops them unless its `expected_*_headers` keep them) never replaces
 * the variable of a hyphenated one.
 *
 * @module
 */
import type nodePath from "node:path";
import { VERSION } from "../../../../../version.ts";
import { decodePath, type RequestContext, splitHostPort } from "../../../context.ts";
import { HandlerError } from "../../../errors.ts";
import { compileTemplate, type Template } from "../../../replacer.ts";
import { sanitizedPathJoin } from "../../file_server/sanitize.ts";
import type { FastCGIOptions } from "./config.ts";
import { requestProto } from "../../../../module/listener.ts";

let path: typeof nodePath | undefined;

/** `SERVER_SOFTWARE`. */
export const SERVER_SOFTWARE = `Gatehouse/${VERSION}`;

const TLS_PROTOCOLS: Record<number, string> = {
  0x0301: "TLSv1",
  0x0302: "TLSv1.1",
  0x0303: "TLSv1.2",
  0x0304: "TLSv1.3",
};

/** Go's names of the cipher suites a TLS listener here can negotiate (for `SSL_CIPHER`). */
const CIPHER_NAMES: Record<number, string> = {
  0x1301: "TLS_AES_128_GCM_SHA256",
  0x1302: "TLS_AES_256_GCM_SHA384",
  0x1303: "TLS_CHACHA20_POLY1305_SHA256",
  0xc02b: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  0xc02c: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  0xc02f: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  0xc030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  0xcca8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
  0xcca9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
};

/**
 * Where a path is split (the index just after the first `split_path` entry found, compared
 * ASCII case-insensitively; non-ASCII characters never match), -1 when none is found, and 0
 * when there are no split entries (Caddy's `splitPos`).
 *
 * @example
 * ```ts
 * import { splitPos } from "./env.ts";
 * splitPos("/app/index.PHP/users/1", [".php"]); // 14
 * ```
 */
export function splitPos(path: string, split: readonly string[]): number {
  if (split.length === 0) return 0;
  for (const s of split) {
    if (s.length === 0 || s.length > path.length) continue;
    outer: for (let i = 0; i <= path.length - s.length; i++) {
      for (let j = 0; j < s.length; j++) {
        let c = path.charCodeAt(i + j);
        if (c >= 0x80) continue outer;
        if (c >= 65 && c <= 90) c += 32;
        if (c !== s.charCodeAt(j)) continue outer;
      }
      return i + s.length;
    }
  }
  return -1;
}

/** What the environment is built from besides the request context. */
export interface EnvInput {
  /** The method of the upstream request. */
  method: string;
  /** The upstream request's target (escaped path and query), after any proxy rewrite. */
  target: string;
  /** The forwarded header fields (names in lower case; hop-by-hop ones already gone). */
  fields: Iterable<[string, string]>;
}

/** A transport's settled templates: root and `env` values rendered per request. */
export class EnvBuilder {
  #root: Template;
  #env: [string, Template][];
  #cfg: FastCGIOptions;

  /** Compiles the config's templates. */
  constructor(cfg: FastCGIOptions) {
    this.#cfg = cfg;
    this.#root = compileTemplate(cfg.root);
    this.#env = Object.entries(cfg.env).map(([k, v]) => [k, compileTemplate(v)]);
  }

  /** The absolute document root for a request (symbolic links resolved when configured). */
  async root(c: RequestContext): Promise<string> {
    const rendered = this.#root.render(c) || ".";
    // node:path loads on first use: a static import put Node compatibility into every
    // server with reverse_proxy, FastCGI or not
    const { isAbsolute, resolve } = path ??= (await import("node:path")).default;
    let root = isAbsolute(rendered) ? resolve(rendered) : resolve(Deno.cwd(), rendered);
    if (this.#cfg.resolveRootSymlink) root = await Deno.realPath(root);
    return root;
  }

  /**
   * The CGI variables of one request, in order (later names override earlier ones, as in
   * Caddy's map). `CONTENT_LENGTH` and the method-specific variables are set by the client.
   */
  async build(c: RequestContext, input: EnvInput): Promise<Map<string, string>> {
    const q = input.target.indexOf("?");
    const rawPath = q < 0 ? input.target : input.target.slice(0, q);
    const query = q < 0 ? "" : input.target.slice(q + 1);
    const fpath = decodePath(rawPath);
    if (fpath === null || fpath.includes("\0")) {
      throw new HandlerError(400, "invalid request path", "reverse_proxy");
    }
    const root = await this.root(c);
    const headers = new Map<string, string>();
    for (const [k, v] of input.fields) {
      const prev = headers.get(k);
      headers.set(k, prev === undefined ? v : `${prev}, ${v}`);
    }
    const host = headers.get("host") ?? c.host;
    const [reqHost, reqPort] = splitHostPort(host);

    let scriptName = fpath;
    let docURI = fpath;
    let pathInfo = "";
    const at = splitPos(fpath, this.#cfg.splitPath);
    if (at > -1) {
      docURI = fpath.slice(0, at);
      pathInfo = fpath.slice(at);
      if (scriptName.endsWith(pathInfo)) {
        scriptName = scriptName.slice(0, scriptName.length - pathInfo.length);
      }
    }
    // the file matcher's remainder stands in when the path gave no PATH_INFO
    if (pathInfo === "") pathInfo = c.extra?.get("http.matchers.file.remainder") ?? "";
    const scriptFilename = sanitizedPathJoin(root, scriptName) ?? root;
    if (scriptName !== "" && !scriptName.startsWith("/")) scriptName = "/" + scriptName;

    const tls = c.info.tls;
    const scheme = tls ? "https" : "http";
    const remoteIP = c.remoteHost;
    const env = new Map<string, string>([
      ["AUTH_TYPE", ""],
      ["CONTENT_LENGTH", headers.get("content-length") ?? ""],
      ["CONTENT_TYPE", headers.get("content-type") ?? ""],
      ["GATEWAY_INTERFACE", "CGI/1.1"],
      ["PATH_INFO", pathInfo],
      ["QUERY_STRING", query],
      ["REMOTE_ADDR", remoteIP],
      ["REMOTE_HOST", remoteIP],
      ["REMOTE_PORT", c.remotePort],
      ["REMOTE_IDENT", ""],
      ["REMOTE_USER", c.userId || (c.extra?.get("http.auth.user.id") ?? "")],
      ["REQUEST_METHOD", input.method],
      ["REQUEST_SCHEME", scheme],
      ["SERVER_NAME", reqHost],
      ["SERVER_PROTOCOL", requestProto(c.info)],
      ["SERVER_SOFTWARE", SERVER_SOFTWARE],
      ["DOCUMENT_ROOT", root],
      ["DOCUMENT_URI", docURI],
      ["HTTP_HOST", host],
      ["REQUEST_URI", c.origQuery ? `${c.origRawPath}?${c.origQuery}` : c.origRawPath],
      ["SCRIPT_FILENAME", scriptFilename],
      ["SCRIPT_NAME", scriptName],
    ]);
    const local = localIP(c.info.localAddress);
    if (local) env.set("SERVER_ADDR", local);
    if (pathInfo !== "") env.set("PATH_TRANSLATED", sanitizedPathJoin(root, pathInfo) ?? root);
    env.set("SERVER_PORT", reqPort || (scheme === "https" ? "443" : "80"));
    if (tls) {
      env.set("HTTPS", "on");
      const proto = TLS_PROTOCOLS[tls.version ?? 0];
      if (proto) env.set("SSL_PROTOCOL", proto);
      const cipher = CIPHER_NAMES[tls.cipherSuite ?? 0];
      if (cipher) env.set("SSL_CIPHER", cipher);
    }
    for (const [k, t] of this.#env) env.set(k, t.render(c));
    // A field spelled with `_` or `.` (kept by the server's expected_*_headers lists) never
    // replaces the variable of the hyphenated field the proxy sets: PHP folds `.` to `_` too.
    let hyphenated: Set<string> | null = null;
    let aliased: [string, string][] | null = null;
    for (const [k, v] of headers) {
      // httpoxy: a client's Proxy header must never become HTTP_PROXY
      if (k === "proxy") continue;
      if (k.indexOf("_") >= 0 || k.indexOf(".") >= 0) {
        (aliased ??= []).push([k, v]);
        continue;
      }
      const name = `HTTP_${k.toUpperCase().replaceAll("-", "_")}`;
      env.set(name, v);
      (hyphenated ??= new Set()).add(name);
    }
    for (const [k, v] of aliased ?? []) {
      const name = `HTTP_${k.toUpperCase().replaceAll("-", "_")}`;
      if (hyphenated?.has(name.replaceAll(".", "_"))) continue;
      env.set(name, v);
    }
    return env;
  }
}

/** The IP of a listen address (`127.0.0.1:80`), or "" for a wildcard host or a unix socket. */
function localIP(address: string): string {
  if (address.startsWith("unix/")) return "";
  const [host] = splitHostPort(address.replace(/^tcp[46]?\//, ""));
  if (host === "" || host === "0.0.0.0" || host === "::") return "";
  return /^[\d.]+$|:/.test(host) ? host : "";
}
