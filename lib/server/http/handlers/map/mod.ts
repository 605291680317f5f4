/**
 * `http.handlers.map`: maps a `source` value through `mappings` (`input` exact or
 * `input_regexp`, with `$1`/`${name}` expansion in outputs) to one or more `destinations`
 * placeholders, falling back to `defaults`. A `null` output leaves that destination unset.
 * The config is {@linkcode MapConfig} (`config.ts`); the Gatehousefile syntax is
 * `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { goReplacement } from "../../header_ops.ts";
import { goRegExp } from "../../regexp.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import { decodeMap, type MapConfig } from "./config.ts";

/** Builds a map handler from its decoded config. */
export function map(config: MapConfig): HttpHandler {
  const source = compileTemplate(config.source ?? "");
  const dests = (config.destinations ?? []).map((d) => d.replace(/^\{|\}$/g, ""));
  const mappings = (config.mappings ?? []).map((m) => ({
    input: m.input,
    re: m.input_regexp !== undefined ? goRegExp(m.input_regexp) : undefined,
    outputs: (m.outputs ?? []).map((v) => v === null || v === undefined ? null : String(v)),
  }));
  const defaults: (Template | null)[] = (config.defaults ?? []).map((d) =>
    d === null ? null : compileTemplate(String(d))
  );
  return {
    serveHTTP(c, next) {
      const input = source.render(c);
      let done = false;
      for (const m of mappings) {
        if (m.input !== undefined ? m.input !== input : !m.re || !m.re.test(input)) continue;
        m.outputs.forEach((out, i) => {
          if (out === null) return;
          let v = out;
          if (m.re) {
            const mm = m.re.exec(input)!;
            v = goReplacement(out).replace(
              /\$(\d+)|\$<(\w+)>/g,
              (_s, n, name) => n !== undefined ? mm[Number(n)] ?? "" : mm.groups?.[name] ?? "",
            );
          }
          c.setPlaceholder(dests[i], compileTemplate(v).render(c));
        });
        done = true;
        break;
      }
      if (!done) {
        defaults.forEach((d, i) => {
          if (d !== null && dests[i]) c.setPlaceholder(dests[i], d.render(c));
        });
      }
      return next(c);
    },
  };
}

/** Registry entry. */
export const mapModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.map",
  create: (config) => map(decodeMap(config)),
};
