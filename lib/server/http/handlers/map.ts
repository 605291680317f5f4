/**
 * `map`: maps a `source` value through `mappings` (`input` exact or `input_regexp`, with
 * `$1`/`${name}` expansion in outputs) to one or more `destinations` placeholders, falling
 * back to `defaults`. A `null` output leaves that destination unset.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { asObject, checkFields, optArray, optString } from "../config.ts";
import { ConfigError } from "../../config/error.ts";
import type { HttpHandler } from "../handler.ts";
import { goReplacement } from "../header_ops.ts";
import { goRegExp } from "../regexp.ts";
import { compileTemplate, type Template } from "../replacer.ts";

/** Registry entry. */
export const mapModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.map",
  create(config) {
    const where = "http.handlers.map";
    checkFields(config, ["handler", "source", "destinations", "mappings", "defaults"], where);
    const source = compileTemplate(optString(config, "source", where) ?? "");
    const dests = ((config.destinations as string[] | undefined) ?? []).map((d) =>
      d.replace(/^\{|\}$/g, "")
    );
    const mappings = (optArray(config, "mappings", where) ?? []).map((m, i) => {
      const o = asObject(m, `${where}.mappings[${i}]`);
      checkFields(o, ["input", "input_regexp", "outputs"], `${where}.mappings[${i}]`);
      const outputs = (o.outputs as unknown[] | undefined) ?? [];
      if (outputs.length > dests.length) {
        throw new ConfigError("invalid_config", `${where}: more outputs than destinations`);
      }
      return {
        input: typeof o.input === "string" ? o.input : undefined,
        re: typeof o.input_regexp === "string" ? goRegExp(o.input_regexp) : undefined,
        outputs: outputs.map((v) => v === null || v === undefined ? null : String(v)),
      };
    });
    const defaults: (Template | null)[] = ((config.defaults as unknown[] | undefined) ?? []).map((
      d,
    ) => d === null ? null : compileTemplate(String(d)));
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
  },
};
