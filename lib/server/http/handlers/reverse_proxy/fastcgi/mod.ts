/**
 * The `fastcgi` transport of `reverse_proxy` (Caddy's `http.reverse_proxy.transport.fastcgi`,
 * what `php_fastcgi` expands to): the seam the proxy handler calls while provisioning. It
 * returns null for any other transport, which the handler then decodes itself.
 *
 * @module
 */
import type { ProvisionContext } from "../../../../module/mod.ts";
import type { Raw } from "../../../config.ts";
import { type FastCGITransport, fastCGITransport } from "./client.ts";
import { parseFastCGIConfig } from "./config.ts";

export type { FastCGITransport } from "./client.ts";

/**
 * The FastCGI transport when `raw` is one (`protocol: "fastcgi"`), else null.
 *
 * @example
 * ```ts
 * import { provisionFastCGI } from "./mod.ts";
 * // in a handler's create(): const fcgi = provisionFastCGI(config.transport, ctx, where);
 * ```
 */
export function provisionFastCGI(
  raw: Raw | undefined,
  ctx: ProvisionContext,
  where: string,
): FastCGITransport | null {
  if (!raw || raw.protocol !== "fastcgi") return null;
  const cfg = parseFastCGIConfig(raw, where);
  return fastCGITransport(cfg, ctx.logger("http.reverse_proxy.transport.fastcgi"));
}
