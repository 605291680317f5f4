/**
 * `http.handlers.vars`: sets request variables (`{http.vars.<name>}`); every field except
 * `handler` is a variable, string values may hold placeholders. The config is
 * {@linkcode VarsConfig} (`config.ts`); the Gatehousefile syntax (`vars`, `root`, `fs`,
 * `log_skip`, `log_name`) is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import { decodeVars, type VarsConfig } from "./config.ts";

/** Builds a vars handler from its decoded config. */
export function vars(config: VarsConfig): HttpHandler {
  const entries: [string, Template | unknown][] = Object.entries(config)
    .filter(([k]) => k !== "handler")
    .map(([k, v]) => [k, typeof v === "string" ? compileTemplate(v) : v]);
  return {
    serveHTTP(c, next) {
      for (const [k, v] of entries) {
        c.setVar(
          k,
          typeof v === "object" && v !== null && "render" in v ? (v as Template).render(c) : v,
        );
      }
      return next(c);
    },
  };
}

/** Registry entry. */
export const varsModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.vars",
  create: (config) => vars(decodeVars(config)),
};
