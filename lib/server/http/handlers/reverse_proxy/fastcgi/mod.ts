/**
 * The `fastcgi` transport of `reverse_proxy` (Caddy's `http.reverse_proxy.transport.fastcgi`,
 * what `php_fastcgi` expands to): its config is {@linkcode FastCGITransportConfig}
 * (`config.ts`), the client `client.ts`.
 *
 * @module
 */
import type { ProvisionContext } from "../../../../module/mod.ts";
import { type FastCGITransport, fastCGITransport } from "./client.ts";
import { fastcgiOptions, type FastCGITransportConfig } from "./config.ts";

export type { FastCGITransport } from "./client.ts";
export type { FastCGITransportConfig } from "./config.ts";

/**
 * The FastCGI transport of a decoded config.
 *
 * @example
 * ```ts ignore
 * const fcgi = provisionFastCGI({ protocol: "fastcgi", split_path: [".php"] }, ctx);
 * ```
 */
export function provisionFastCGI(
  config: FastCGITransportConfig,
  ctx: ProvisionContext,
): FastCGITransport {
  return fastCGITransport(
    fastcgiOptions(config),
    ctx.logger("http.reverse_proxy.transport.fastcgi"),
  );
}
