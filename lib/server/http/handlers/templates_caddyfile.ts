/**
 * Gatehousefile syntax of the `templates`, `request_body` and `timeouts` handlers.
 *
 * ```
 * templates [<matcher>] { mime <types...>; between <open> <close>; root <path>; extensions { ... } }
 * request_body [<matcher>] { max_size <size>; set <body> }
 * timeouts [<matcher>] { read_timeout <d> [<min_rate>]; write_timeout <d> [<min_rate>]; max_write_chunk <size> }
 * ```
 *
 * @module
 */
import type { Helper } from "../../caddyfile/helper.ts";
import { unmarshalModule } from "../../caddyfile/registry.ts";
import type { Handler } from "../../caddyfile/types.ts";
import { parseSize } from "../../caddyfile/values.ts";
import { goParseDuration } from "../../config/duration.ts";

/** `templates`. */
export function parseTemplates(h: Helper): Handler {
  h.next();
  const t: Handler = { handler: "templates" };
  for (const n = h.nesting(); h.nextBlock(n);) {
    switch (h.val()) {
      case "mime": {
        const m = h.remainingArgs();
        if (m.length === 0) throw h.argErr();
        t.mime_types = m;
        break;
      }
      case "between": {
        const b = h.remainingArgs();
        if (b.length !== 2) throw h.argErr();
        t.delimiters = b;
        break;
      }
      case "root": {
        const a = h.args(1);
        if (!a) throw h.argErr();
        if (a[0] !== "") t.file_root = a[0];
        break;
      }
      case "extensions": {
        if (h.nextArg()) throw h.argErr();
        if (t.match) throw h.err("extensions already specified");
        const ext: Record<string, unknown> = {};
        for (const m = h.nesting(); h.nextBlock(m);) {
          const name = h.val();
          ext[name] = unmarshalModule(h, `http.handlers.templates.functions.${name}`);
        }
        if (Object.keys(ext).length > 0) t.match = ext;
        break;
      }
    }
  }
  return t;
}

/** `timeouts`. */
export function parseTimeouts(h: Helper): Handler {
  h.next();
  const t: Handler = { handler: "timeouts" };
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
