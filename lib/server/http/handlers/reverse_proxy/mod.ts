/**
 * `http.handlers.reverse_proxy`: forwards requests to `upstreams` (`dial`, `max_requests`; a
 * dial address with request placeholders such as a `map` output is resolved per request)
 * chosen by `load_balancing.selection_policy`, retrying other upstreams while `try_duration`
 * lasts (or `retries` times), every `try_interval`, for dial failures and requests matched by
 * `retry_match`. Health checks (active and passive) take upstreams out. Sets
 * `X-Forwarded-For/Proto/Host` (forward.ts), applies `headers.request`/`headers.response`
 * operations, strips hop-by-hop headers, streams bodies both ways (or buffers them:
 * buffers.ts) and relays upgraded connections (streams.ts). `rewrite` changes the method and
 * URI of the upstream request only; `handle_response` hands chosen upstream responses to
 * routes (handle_response.ts). `flush_interval` is accepted: responses always stream.
 *
 * The config is {@linkcode ReverseProxyConfig} (`config.ts`, field by field as Caddy's); the
 * handler is `handler.ts`; the Gatehousefile syntax (`reverse_proxy`, `php_fastcgi`,
 * `forward_auth` and the transport, selection policy and upstream source modules) is
 * `caddyfile*.ts`, the JSON → Gatehousefile writer `writer*.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeReverseProxy } from "./config.ts";
import { ReverseProxy } from "./handler.ts";

export type { ReverseProxyConfig } from "./config.ts";

/** Registry entry. */
export const reverseProxyModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.reverse_proxy",
  create: (config, ctx) => ReverseProxy.provision(decodeReverseProxy(config), ctx),
};
