/**
 * Gatehousefile syntax of `php_fastcgi` (a `reverse_proxy` with the `fastcgi` transport,
 * plus the rewrites a PHP site needs: directory index redirect, `try_files`) and of the
 * `fastcgi` transport itself.
 *
 * ```
 * php_fastcgi [<matcher>] <php-fpm addresses...> {
 *     root <path>   split <ext...>   env <key> <value>   index <filename>|off
 *     try_files <files...>   resolve_root_symlink   capture_stderr
 *     dial_timeout|read_timeout|write_timeout <duration>
 *     <any reverse_proxy subdirective>
 * }
 * transport fastcgi { root; split; env; resolve_root_symlink; capture_stderr; *_timeout }
 * ```
 *
 * @module
 */
import { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import {
  type ConfigValue,
  type Route,
  RouteList,
  subrouteHandler,
} from "../../../caddyfile/types.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseProxySegment } from "./caddyfile_proxy.ts";
import { finishHandleResponse } from "./caddyfile_response.ts";
import type { FastCGITransportConfig } from "./fastcgi/config.ts";

/** The `fastcgi` transport's fields, without its module name. */
type FastCGIFields = Omit<FastCGITransportConfig, "protocol">;

function timeout(d: Dispenser): number {
  return d.duration((text, reason) => `bad timeout value ${text}: ${reason}`);
}

/** Sets `o[k]`, or removes it for a zero value (Go's `omitempty`). */
function put<K extends keyof FastCGIFields>(o: FastCGIFields, k: K, v: FastCGIFields[K]): void {
  if (v === 0 || v === "" || v === undefined) delete o[k];
  else o[k] = v;
}

/** The `fastcgi` transport: `root`, `split`, `env`, `resolve_root_symlink`, timeouts, `capture_stderr`. */
export function fastcgiTransport(d: Dispenser): FastCGIFields {
  d.next();
  const t: FastCGIFields = {};
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    switch (k) {
      case "root":
        if (!d.nextArg()) throw d.argErr();
        put(t, "root", d.val());
        break;
      case "split": {
        const s = d.remainingArgs();
        t.split_path = s;
        if (s.length === 0) throw d.argErr();
        break;
      }
      case "env": {
        const a = d.remainingArgs();
        if (a.length !== 2) throw d.argErr();
        (t.env ??= {})[a[0]] = a[1];
        break;
      }
      case "resolve_root_symlink":
      case "capture_stderr":
        if (d.nextArg()) throw d.argErr();
        t[k] = true;
        break;
      case "dial_timeout":
      case "read_timeout":
      case "write_timeout":
        if (!d.nextArg()) throw d.argErr();
        put(t, k, timeout(d));
        break;
      default:
        throw d.unknownSubdirective([
          "root",
          "split",
          "env",
          "resolve_root_symlink",
          "capture_stderr",
          "dial_timeout",
          "read_timeout",
          "write_timeout",
        ]);
    }
  }
  return t;
}

/** `php_fastcgi [<matcher>] <php-fpm addresses...> { root, split, env, index, try_files, ... }`. */
export function parsePHPFastCGI(h: Helper): ConfigValue[] {
  if (!h.next()) throw h.argErr();
  const transport: FastCGIFields = {};
  let extensions = [".php"];
  let index = "index.php";
  let tryFiles: string[] = [];
  const matcher = h.extractMatcherSet();
  const d = new Dispenser(h.nextSegment());
  while (d.next()) {
    while (d.nextBlock(0)) {
      if (d.nesting() !== 1) continue;
      const k = d.val();
      switch (k) {
        case "root":
          if (!d.nextArg()) throw d.argErr();
          put(transport, "root", d.val());
          d.deleteN(2);
          break;
        case "split":
          extensions = d.remainingArgs();
          d.deleteN(extensions.length + 1);
          if (extensions.length === 0) throw d.argErr();
          break;
        case "env": {
          const a = d.remainingArgs();
          d.deleteN(a.length + 1);
          if (a.length !== 2) throw d.argErr();
          (transport.env ??= {})[a[0]] = a[1];
          break;
        }
        case "index": {
          const a = d.remainingArgs();
          d.deleteN(a.length + 1);
          if (a.length !== 1) throw d.argErr();
          index = a[0];
          break;
        }
        case "try_files": {
          const a = d.remainingArgs();
          d.deleteN(a.length + 1);
          if (a.length < 1) throw d.argErr();
          tryFiles = a;
          break;
        }
        case "resolve_root_symlink":
        case "capture_stderr": {
          const a = d.remainingArgs();
          d.deleteN(a.length + 1);
          transport[k] = true;
          break;
        }
        case "dial_timeout":
        case "read_timeout":
        case "write_timeout":
          if (!d.nextArg()) throw d.argErr();
          put(transport, k, timeout(d));
          d.deleteN(2);
          break;
      }
    }
  }
  d.reset();
  transport.split_path = extensions;

  const routes: Route[] = [];
  if (index !== "off") {
    const dirIndex = `{http.request.uri.path}/${index}`;
    let policy = "first_exist_fallback";
    let dirRedir: boolean;
    if (tryFiles.length === 0) {
      tryFiles = ["{http.request.uri.path}", dirIndex, index];
      dirRedir = true;
    } else {
      if (!tryFiles[tryFiles.length - 1].endsWith(".php")) policy = "";
      dirRedir = tryFiles.includes(dirIndex);
    }
    if (dirRedir) {
      routes.push({
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
    const file: Record<string, unknown> = { try_files: tryFiles };
    if (policy) file.try_policy = policy;
    file.split_path = extensions;
    routes.push({
      match: [{ file }],
      handle: [{ handler: "rewrite", uri: "{http.matchers.file.relative}" }],
    });
  }
  d.next();
  const p = parseProxySegment(d, {
    handler: "reverse_proxy",
    transport: { ...transport, protocol: "fastcgi" },
  });
  finishHandleResponse(h, p);
  routes.push({ match: [{ path: extensions.map((e) => `*${e}`) }], handle: [p.handler] });
  if (matcher) {
    return [{ class: "route", value: { match: [matcher], handle: [subrouteHandler(routes)] } }];
  }
  return [{ class: "route", value: new RouteList(routes) }];
}

/** The Gatehousefile syntax of `php_fastcgi` and of the `fastcgi` transport. */
export const syntax: SyntaxSet = {
  directives: { php_fastcgi: parsePHPFastCGI },
  modules: { "http.reverse_proxy.transport.fastcgi": fastcgiTransport },
};
