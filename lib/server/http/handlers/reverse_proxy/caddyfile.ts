/**
 * Gatehousefile syntax of the reverse proxy: the `reverse_proxy` directive (its subdirectives
 * are read by `caddyfile_proxy.ts`, which `php_fastcgi` and `forward_auth` share), and the
 * syntax set of the whole family — `php_fastcgi` and the `fastcgi` transport
 * (`caddyfile_fastcgi.ts`), `forward_auth` (`caddyfile_forward_auth.ts`), the `http`
 * transport, the selection policies, the dynamic upstream sources and the network proxies
 * (`caddyfile_transport.ts`).
 *
 * ```
 * reverse_proxy [<matcher>] [<upstreams...>] {
 *     to <upstreams...>   dynamic <source> ...   lb_policy <policy> ...   lb_retries <n>
 *     health_uri <uri>   ...   header_up <field> <value>   transport http|fastcgi { ... }
 *     @name <response matcher>   handle_response [@name] { ... }   replace_status [@name] <code>
 * }
 * ```
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { ReverseProxyConfig } from "./config.ts";
import { syntax as fastcgiSyntax } from "./caddyfile_fastcgi.ts";
import { syntax as forwardAuthSyntax } from "./caddyfile_forward_auth.ts";
import { parseProxySegment } from "./caddyfile_proxy.ts";
import { finishHandleResponse } from "./caddyfile_response.ts";
import { syntax as moduleSyntax } from "./caddyfile_transport.ts";

export { parseProxySegment } from "./caddyfile_proxy.ts";
export type { ProxyParse } from "./caddyfile_response.ts";

/** `reverse_proxy`. */
export function parseReverseProxy(h: Helper): ReverseProxyConfig {
  const p = parseProxySegment(h);
  finishHandleResponse(h, p);
  return p.handler;
}

/** The Gatehousefile syntax of the reverse proxy family. */
export const syntax: SyntaxSet = {
  handlerDirectives: { reverse_proxy: parseReverseProxy },
  directives: { ...fastcgiSyntax.directives, ...forwardAuthSyntax.directives },
  modules: { ...moduleSyntax.modules, ...fastcgiSyntax.modules },
};
