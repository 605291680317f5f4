/**
 * Gatehousefile syntax of the `templates` handler (which this server cannot run; a config
 * naming it is refused when loaded):
 *
 * ```
 * templates [<matcher>] { mime <types...>; between <open> <close>; root <path>; extensions { ... } }
 * ```
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import { type SyntaxSet, unmarshalModule } from "../../../caddyfile/registry.ts";
import type { TemplatesConfig } from "./config.ts";

/** `templates`. */
export function parseTemplates(h: Helper): TemplatesConfig {
  h.next();
  const t: TemplatesConfig = { handler: "templates" };
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

/** The Gatehousefile syntax of `templates`. */
export const syntax: SyntaxSet = { handlerDirectives: { templates: parseTemplates } };
