/**
 * The config of `http.handlers.subroute`, field by field as Caddy's `Subroute` and
 * `HTTPErrorConfig` (`modules/caddyhttp/subroute.go`, `server.go`), and its decoder. The JSON
 * decoder, the `route`, `handle`, `handle_path` and `handle_errors` directives
 * (`caddyfile.ts`, `../rewrite/caddyfile.ts`) and the writer (`writer.ts`) make or read this
 * type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import type { RouteConfig } from "../../routes.ts";

/** Routes that handle an error of the primary routes. */
export type SubrouteErrorsConfig = {
  /** The routes run when the primary routes fail (`{http.error.*}` describes the error). */
  routes?: RouteConfig[];
};

/**
 * `http.handlers.subroute`: a route list of its own, run as one handler; when none of its
 * routes ends the chain, the outer chain continues.
 */
export type SubrouteConfig = {
  /** The module name. */
  handler: "subroute";
  /** The primary routes (decoded with their matchers and handlers when provisioned). */
  routes?: RouteConfig[];
  /** Error handling for the primary routes, instead of the server's. */
  errors?: SubrouteErrorsConfig;
};

/** The fields of {@linkcode SubrouteConfig}. */
export const SUBROUTE_FIELDS: readonly (keyof SubrouteConfig)[] = ["handler", "routes", "errors"];

/**
 * Decodes a `subroute` config: its known fields. The routes, and then the error routes, are
 * decoded when provisioned, in that order ({@linkcode decodeSubrouteErrors}).
 *
 * @example
 * ```ts
 * import { decodeSubroute } from "./config.ts";
 * decodeSubroute({ handler: "subroute", routes: [] }).routes; // []
 * ```
 */
export function decodeSubroute(raw: Raw): SubrouteConfig {
  const d = new Decoder(raw, "http.handlers.subroute").fields(SUBROUTE_FIELDS);
  const out: SubrouteConfig = { handler: "subroute" };
  if (d.value("routes") !== undefined) out.routes = d.value("routes") as RouteConfig[];
  if (d.value("errors") !== undefined) out.errors = d.value("errors") as SubrouteErrorsConfig;
  return out;
}

/**
 * Decodes the `errors` of a decoded subroute config (an object with `routes` only), after its
 * primary routes are provisioned; undefined when there are none.
 *
 * @example
 * ```ts
 * import { decodeSubrouteErrors } from "./config.ts";
 * decodeSubrouteErrors({ handler: "subroute", errors: { routes: [] } }); // { routes: [] }
 * ```
 */
export function decodeSubrouteErrors(config: SubrouteConfig): SubrouteErrorsConfig | undefined {
  const errors = new Decoder(config, "http.handlers.subroute").object("errors");
  if (!errors) return undefined;
  errors.fields(["routes"]);
  const out: SubrouteErrorsConfig = {};
  if (errors.value("routes") !== undefined) out.routes = errors.value("routes") as RouteConfig[];
  return out;
}
