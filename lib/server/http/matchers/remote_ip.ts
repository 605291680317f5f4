/**
 * `remote_ip` matcher: the peer address is inside one of `ranges` (CIDR or single address,
 * `private_ranges`). With `forwarded` (deprecated in Caddy), the first `X-Forwarded-For`
 * address is used instead.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { checkFields, optBool, optStrings } from "../config.ts";
import type { RequestMatcher } from "../handler.ts";
import { ipInRanges, parseIP, parseRanges } from "../../net/ip.ts";

/** Registry entry. */
export const remoteIPMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.remote_ip",
  create(config) {
    const where = "http.matchers.remote_ip";
    checkFields(config, ["ranges", "forwarded"], where);
    const ranges = parseRanges(optStrings(config, "ranges", where) ?? []);
    const forwarded = optBool(config, "forwarded", where) ?? false;
    return {
      match(c) {
        let addr = c.remoteHost;
        if (forwarded) {
          const xff = c.headers.get("x-forwarded-for");
          if (xff) addr = xff.split(",")[0].trim();
        }
        const ip = parseIP(addr);
        return ip !== null && ipInRanges(ip, ranges);
      },
    };
  },
};

/** `client_ip` matcher: like `remote_ip` on the client IP (trusted proxies honoured). */
export const clientIPMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.client_ip",
  create(config) {
    const where = "http.matchers.client_ip";
    checkFields(config, ["ranges"], where);
    const ranges = parseRanges(optStrings(config, "ranges", where) ?? []);
    return {
      match(c) {
        const ip = parseIP(c.clientIP);
        return ip !== null && ipInRanges(ip, ranges);
      },
    };
  },
};
