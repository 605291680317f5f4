/**
 * `http.handlers.templates`: runs matching responses as Go templates (text/template, as
 * Caddy's `templates` handler) with Caddy's template context and functions and sprig's.
 * The config is {@linkcode TemplatesConfig} (`config.ts`); the handler is `handler.ts`, the
 * context and functions `context.ts`, the engine `gotemplate/`; the Gatehousefile syntax is
 * `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeTemplates } from "./config.ts";
import { Templates } from "./handler.ts";

export type { TemplatesConfig } from "./config.ts";

/** Registry entry. */
export const templatesModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.templates",
  create: (config, ctx) =>
    new Templates(decodeTemplates(config), ctx.logger("http.handlers.templates")),
};
