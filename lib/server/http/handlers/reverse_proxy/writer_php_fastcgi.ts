/**
 * `php_fastcgi` rebuilt from its expansion. The adapter turns `php_fastcgi` into up to three
 * routes — a redirect of directories to their trailing slash (when the index file exists),
 * a `try_files` rewrite whose file matcher splits the path at the PHP extensions, and a
 * `reverse_proxy` with the `fastcgi` transport under a `*.php` path matcher — kept together
 * without a subroute, or inside one under the directive's matcher. The reverse direction
 * recognises exactly those routes (the options are read back and the expansion built again
 * for comparison) and writes the directive with its subdirectives; the proxy's other options
 * pass through, as `php_fastcgi` hands them to `reverse_proxy`.
 *
 * @module
 */
import type { Ctx, Directive } from "../../../caddyfile/writer/context.ts";
import { childPath, isObject } from "../../../caddyfile/writer/problems.ts";
import { stableJSON } from "../../../caddyfile/types.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";

type Obj = Record<string, unknown>;

const PATH = "{http.request.uri.path}";

/** The routes `php_fastcgi` puts before its proxy route (the adapter's expansion). */
function expansion(index: string, tryFiles: string[], exts: string[]): Obj[] {
  if (index === "off") return [];
  const dirIndex = `${PATH}/${index}`;
  let policy = "first_exist_fallback";
  let files = tryFiles;
  let redirect: boolean;
  if (files.length === 0) {
    files = [PATH, dirIndex, index];
    redirect = true;
  } else {
    if (!files[files.length - 1].endsWith(".php")) policy = "";
    redirect = files.includes(dirIndex);
  }
  const out: Obj[] = [];
  if (redirect) {
    out.push({
      match: [{ file: { try_files: [dirIndex] }, not: [{ path: ["*/"] }] }],
      handle: [{
        handler: "static_response",
        status_code: 308,
        headers: {
          Location: ["{http.request.orig_uri.path}/{http.request.orig_uri.prefixed_query}"],
        },
      }],
    });
  }
  const file: Obj = { try_files: files, split_path: exts };
  if (policy) file.try_policy = policy;
  out.push({
    match: [{ file }],
    handle: [{ handler: "rewrite", uri: "{http.matchers.file.relative}" }],
  });
  return out;
}

/**
 * The PHP extensions of a proxy route `*.php` → fastcgi, or undefined when it is not one. The
 * route may hold the proxies of several `php_fastcgi` with the same extensions (the adapter
 * merges adjacent routes with equal matchers; the later ones have `index off`).
 */
function proxyExtensions(r: unknown): string[] | undefined {
  if (!isObject(r) || Object.keys(r).sort().join() !== "handle,match") return undefined;
  const h = r.handle, m = r.match;
  if (!Array.isArray(h) || h.length === 0) return undefined;
  const exts = isObject(h[0]) && isObject(h[0].transport) ? h[0].transport.split_path : undefined;
  if (!Array.isArray(exts) || exts.length === 0) return undefined;
  if (!exts.every((e) => typeof e === "string")) return undefined;
  for (const p of h) {
    if (!isObject(p) || p.handler !== "reverse_proxy" || !isObject(p.transport)) return;
    const t = p.transport;
    if (t.protocol !== "fastcgi" || stableJSON(t.split_path) !== stableJSON(exts)) return;
  }
  const want = [{ path: exts.map((e) => `*${e}`) }];
  return stableJSON(m) === stableJSON(want) ? exts as string[] : undefined;
}

/** The options whose expansion gives `before` (the routes ahead of the proxy route). */
function options(
  before: unknown[],
  exts: string[],
): { index: string; tryFiles: string[] } | undefined {
  const candidates: { index: string; tryFiles: string[] }[] = [];
  if (before.length === 0) candidates.push({ index: "off", tryFiles: [] });
  else {
    const rw = before[before.length - 1] as Obj;
    const file = (rw?.match as Obj[] | undefined)?.[0]?.file as Obj | undefined;
    const tryFiles = file?.try_files;
    if (!Array.isArray(tryFiles) || !tryFiles.every((x) => typeof x === "string")) return;
    let index = "index.php";
    if (before.length === 2) {
      const redir = (((before[0] as Obj)?.match as Obj[] | undefined)?.[0]?.file as Obj)
        ?.try_files;
      const dirIndex = Array.isArray(redir) ? redir[0] : undefined;
      if (typeof dirIndex !== "string" || !dirIndex.startsWith(`${PATH}/`)) return undefined;
      index = dirIndex.slice(PATH.length + 1);
      if (index === "" || index === "off") return undefined;
    }
    candidates.push({ index, tryFiles: [] }, { index, tryFiles });
  }
  const want = stableJSON(before);
  return candidates.find((c) => stableJSON(expansion(c.index, c.tryFiles, exts)) === want);
}

/**
 * How many routes from `routes[i]` are one `php_fastcgi` expansion written without a
 * subroute (1 to 3), or 0.
 */
export function phpFastcgiSpan(routes: unknown[], i: number): number {
  for (let n = 3; n >= 1; n--) {
    if (i + n > routes.length) continue;
    const exts = proxyExtensions(routes[i + n - 1]);
    if (exts && options(routes.slice(i, i + n - 1), exts)) return n;
  }
  return 0;
}

/**
 * The `php_fastcgi` directives of the expansion `routes` (all of them; the first is route
 * `offset` of the list at `path`): one, and one with `index off` per further proxy merged
 * into the proxy route; null when they are not one (nothing reported) or after a proxy
 * reported a problem.
 */
export function phpFastcgi(
  routes: unknown[],
  path: string,
  ctx: Ctx,
  offset = 0,
): Directive[] | null {
  if (routes.length === 0 || phpFastcgiSpan(routes, 0) !== routes.length) return null;
  const exts = proxyExtensions(routes[routes.length - 1])!;
  const opts = options(routes.slice(0, -1), exts)!;
  const proxies = (routes[routes.length - 1] as { handle: unknown[] }).handle;
  const handlePath = childPath(childPath(path, offset + routes.length - 1), "handle");
  const out: Directive[] = [];
  for (const [i, proxy] of proxies.entries()) {
    const d = directive(proxy, childPath(handlePath, i), exts, ctx);
    if (!d) return null;
    const index = i === 0 ? opts.index : "off";
    if (index !== "index.php") d.own.push(line(["index", index]));
    if (i === 0 && opts.tryFiles.length) d.own.push(line(["try_files", ...opts.tryFiles]));
    const block = [...d.own, ...d.passed];
    out.push({ name: "php_fastcgi", args: d.args, block: block.length ? block : undefined });
  }
  return out;
}

/** One proxy as `php_fastcgi` parts: its upstreams, own subdirectives and the proxy's. */
function directive(
  proxy: unknown,
  path: string,
  exts: string[],
  ctx: Ctx,
): { args: Directive["args"]; own: Line[]; passed: Line[] } | null {
  const written = ctx.handler(proxy, path);
  if (!written || written.length !== 1 || written[0].name !== "reverse_proxy") return null;
  const own: Line[] = [], passed: Line[] = [];
  for (const l of written[0].block ?? []) {
    const [a, b] = l.words;
    if (a?.text !== "transport" || b?.text !== "fastcgi") {
      passed.push(l);
      continue;
    }
    // the fastcgi transport's subdirectives are php_fastcgi's own (`split .php` is implied)
    for (const t of l.block ?? []) {
      if (t.words[0].text === "split" && stableJSON(exts) === stableJSON([".php"])) continue;
      own.push(t);
    }
  }
  return { args: written[0].args, own, passed };
}

/**
 * `php_fastcgi` for a subroute handler holding exactly one expansion with a single proxy
 * (the form the adapter gives `php_fastcgi <matcher>`); null when it is not one (nothing
 * reported) or after the proxy reported a problem.
 */
export function phpFastcgiSubroute(routes: unknown[], path: string, ctx: Ctx): Directive | null {
  if (routes.length === 0 || phpFastcgiSpan(routes, 0) !== routes.length) return null;
  const proxy = routes[routes.length - 1] as { handle: unknown[] };
  if (proxy.handle.length !== 1) return null;
  return phpFastcgi(routes, path, ctx)?.[0] ?? null;
}
