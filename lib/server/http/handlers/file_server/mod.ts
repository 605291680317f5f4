/**
 * `http.handlers.file_server`: serves files under `root`. The config is
 * {@linkcode FileServerConfig} (`config.ts`, field by field as Caddy's); the handler is
 * `handler.ts`; the Gatehousefile syntax (`file_server`, `try_files`, the `file` matcher) is
 * `caddyfile.ts` and the JSON → Gatehousefile writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeFileServer } from "./config.ts";
import { FileServer } from "./handler.ts";

export type { FileServerConfig } from "./config.ts";

/** Registry entry. */
export const fileServerModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.file_server",
  create: (config) => FileServer.provision(decodeFileServer(config)),
};
