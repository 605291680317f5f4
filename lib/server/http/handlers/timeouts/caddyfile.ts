/**
 * Gatehousefile syntax of the `timeouts` handler (which this server cannot run; a config
 * naming it is refused when loaded):
 *
 * ```
 * timeouts [<matcher>] { read_timeout <d> [<min_rate>]; write_timeout <d> [<min_rate>]; max_write_chunk <size> }
 * ```
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseSize } from "../../../caddyfile/values.ts";
import { goParseDuration } from "../../../config/duration.ts";
import type { TimeoutsConfig } from "./config.ts";

/** `timeouts`. */
export function parseTimeouts(h: Helper): TimeoutsConfig {
  h.next();
  const t: TimeoutsConfig = { handler: "timeouts" };
  for (const n = h.nesting(); h.nextBlock(n);) {
    const k = h.val();
    switch (k) {
      case "read_timeout":
      case "write_timeout": {
        const a = h.remainingArgs();
        if (a.length < 1 || a.length > 2) throw h.argErr();
        try {
          const v = goParseDuration(a[0]);
          if (v !== 0) t[k] = v;
        } catch (e) {
          throw h.err(`parsing ${k}: ${(e as Error).message}`);
        }
        if (a.length === 2) {
          if (!/^[+-]?\d+$/.test(a[1])) {
            throw h.err(
              `parsing ${k} min_rate: strconv.ParseInt: parsing ${
                JSON.stringify(a[1])
              }: invalid syntax`,
            );
          }
          const rate = Number(a[1]);
          if (rate !== 0) t[k === "read_timeout" ? "read_min_rate" : "write_min_rate"] = rate;
        }
        break;
      }
      case "max_write_chunk": {
        const a = h.allArgs(1);
        if (!a) throw h.argErr();
        try {
          const v = parseSize(a[0]);
          if (v !== 0) t.max_write_chunk = v;
        } catch (e) {
          throw h.err(`parsing max_write_chunk: ${(e as Error).message}`);
        }
        break;
      }
      default:
        throw h.unknownSubdirective(
          ["read_timeout", "write_timeout", "max_write_chunk"],
          "unrecognized timeouts subdirective '%s'",
        );
    }
  }
  return t;
}

/** The Gatehousefile syntax of `timeouts`. */
export const syntax: SyntaxSet = { handlerDirectives: { timeouts: parseTimeouts } };
