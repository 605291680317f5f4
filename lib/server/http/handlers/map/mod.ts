/**
 * `http.handlers.map`: maps a `source` value through `mappings` (`input` exact, its outputs'
 * placeholders replaced, or `input_regexp`, its outputs taking `$1`/`${name}` groups) to one
 * or more `destinations` placeholders. Each destination takes the first matching row with an
 * output for it (a `null` or missing output falls through to later rows), else its entry in
 * `defaults`, else "".
 * The config is {@linkcode MapConfig} (`config.ts`); the Gatehousefile syntax is
 * `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { goRegExp } from "../../../config/regexp.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import { decodeMap, type MapConfig } from "./config.ts";

/**
 * Go's `Regexp.ExpandString`: `$1`, `${1}`, `$name`, `${name}` are the match's groups (""
 * when absent or unmatched), `$$` is a `$`; any other `$` stays as written.
 */
function goExpand(template: string, m: RegExpExecArray): string {
  let out = "";
  for (let i = 0; i < template.length; i++) {
    const ch = template[i];
    if (ch !== "$") {
      out += ch;
      continue;
    }
    if (template[i + 1] === "$") {
      out += "$";
      i++;
      continue;
    }
    const ref = template[i + 1] === "{"
      ? /^\{(\w+)\}/.exec(template.slice(i + 1))
      : /^(\w+)/.exec(template.slice(i + 1));
    if (!ref) {
      out += ch;
      continue;
    }
    const name = ref[1];
    out += (/^\d+$/.test(name) ? m[Number(name)] : m.groups?.[name]) ?? "";
    i += ref[0].length;
  }
  return out;
}

/** One row: an exact input or a regexp, and an output per destination (null: none). */
interface Row {
  input?: string;
  re?: RegExp;
  outputs: (string | null)[];
  /** The outputs of an exact row, their placeholders replaced when chosen. */
  templates: (Template | null)[];
}

/** Builds a map handler from its decoded config. */
export function map(config: MapConfig): HttpHandler {
  const source = compileTemplate(config.source ?? "");
  const dests = (config.destinations ?? []).map((d) => d.replace(/^\{|\}$/g, ""));
  const rows: Row[] = (config.mappings ?? []).map((m) => {
    const outputs = (m.outputs ?? []).map((v) => v === null || v === undefined ? null : String(v));
    return {
      input: m.input,
      re: m.input_regexp !== undefined ? goRegExp(m.input_regexp) : undefined,
      outputs,
      templates: m.input_regexp !== undefined
        ? []
        : outputs.map((v) => v === null ? null : compileTemplate(v)),
    };
  });
  const defaults: (Template | null)[] = (config.defaults ?? []).map((d) =>
    d === null ? null : compileTemplate(String(d))
  );
  return {
    serveHTTP(c, next) {
      const input = source.render(c);
      // each regexp runs once per request, whichever destination asks first
      const execs: (RegExpExecArray | null | undefined)[] = [];
      // each destination takes the first row that matches and has an output for it, else
      // its default, as Caddy's map.go: a row's missing or null output falls through
      dests.forEach((dest, i) => {
        for (let r = 0; r < rows.length; r++) {
          const row = rows[r];
          const out = row.outputs[i];
          if (out === null || out === undefined) continue;
          if (row.re) {
            let m = execs[r];
            if (m === undefined) m = execs[r] = row.re.exec(input);
            if (m === null) continue;
            // a regexp row's output takes its groups, not placeholders (Caddy's ExpandString)
            c.setPlaceholder(dest, goExpand(out, m));
            return;
          }
          if ((row.input ?? "") === input) {
            c.setPlaceholder(dest, row.templates[i]!.render(c));
            return;
          }
        }
        const d = defaults[i];
        // no row and no default: the destination is known and empty, as in Caddy
        if (d !== null) c.setPlaceholder(dest, d === undefined ? "" : d.render(c));
      });
      return next(c);
    },
  };
}

/** Registry entry. */
export const mapModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.map",
  create: (config) => map(decodeMap(config)),
};
