/**
 * `php_fastcgi` rebuilt from its expansion. The adapter turns `php_fastcgi` into up to three
 * routes — a redirect of directories to their trailing slash (when the index file exists),
 * a `try_files` rewrite whose file matcher splits the path at the PHP extensions, and a
 * `reverse_proxy` with the `fastcgi` transport under a `*.php` path matcher — kept together
 * without a subroute, or inside one when the directive has a matcher. The reverse direction
 * recognises exactly those routes (the options are read back and the expansion built again
 * for comparison) and writes the directive with its subdirectives; the proxy's other options
 * pass through, as `php_fastcgi` hands them to `reverse_proxy`.
 *
 * @module
 */
import type { Ctx, Directive } from "../context.ts";
import { childPath, isObject } from "../problems.ts";
import { stableJSON } from "../../types.ts";
import { type Line, line } from "../tokens.ts";
import { reverseHandler } from "../routes.ts";

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

/** The PHP extensions of a proxy route `*.php` → fastcgi, or undefined when it is not one. */
function proxyExtensions(r: unknown): string[] | undefined {
  if (!isObject(r) || Object.keys(r).sort().join() !== "handle,match") return undefined;
  const h = r.handle, m = r.match;
  if (!Array.isArray(h) || h.length !== 1 || !isObject(h[0])) return undefined;
  if (h[0].handler !== "reverse_proxy" || !isObject(h[0].transport)) return undefined;
  const t = h[0].transport;
  const exts = t.split_path;
  if (t.protocol !== "fastcgi" || !Array.isArray(exts) || exts.length === 0) return undefined;
  if (!exts.every((e) => typeof e === "string")) return undefined;
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
 * The `php_fastcgi` directive of the expansion `routes` (all of them; the first is route
 * `offset` of the list at `path`); null when they are not one (nothing reported) or after the
 * proxy reported a problem.
 */
export function phpFastcgi(
  routes: unknown[],
  path: string,
  ctx: Ctx,
  offset = 0,
): Directive | null {
  if (routes.length === 0 || phpFastcgiSpan(routes, 0) !== routes.length) return null;
  const exts = proxyExtensions(routes[routes.length - 1])!;
  const opts = options(routes.slice(0, -1), exts)!;
  const last = offset + routes.length - 1;
  const proxyPath = childPath(childPath(childPath(path, last), "handle"), 0);
  const proxy = (routes[routes.length - 1] as { handle: unknown[] }).handle[0];
  const written = reverseHandler(proxy, proxyPath, ctx);
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
  if (opts.index !== "index.php") own.push(line(["index", opts.index]));
  if (opts.tryFiles.length) own.push(line(["try_files", ...opts.tryFiles]));
  const block = [...own, ...passed];
  return {
    name: "php_fastcgi",
    args: written[0].args,
    block: block.length ? block : undefined,
  };
}
