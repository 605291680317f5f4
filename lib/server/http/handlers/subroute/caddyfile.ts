/**
 * Gatehousefile syntax of the `subroute` handler: the blocks whose subdirectives are
 * directives — `route` (kept in the order written), `handle` (sorted like a site, mutually
 * exclusive with sibling `handle`s) and `handle_errors` (routes run on errors, optionally
 * only for some status codes).
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import {
  buildSubroute,
  parseSegmentAsConfig,
  parseSegmentAsSubroute,
} from "../../../caddyfile/routes.ts";
import { type ConfigValue, type Route, subrouteHandler } from "../../../caddyfile/types.ts";
import type { SubrouteConfig } from "./config.ts";

/**
 * `route`: directives run in the order written. Only handler directives belong here: a
 * directive that configures the site (`tls`, `bind`, `log`, ...) or its errors
 * (`handle_errors`) is refused at the line it is written.
 */
export function parseRoute(h: Helper): SubrouteConfig {
  return subrouteHandler(buildSubroute(parseSegmentAsConfig(h), h.ctx, false)) as SubrouteConfig;
}

/** `handle`: a block of directives, sorted by directive order. */
export function parseHandle(h: Helper): SubrouteConfig {
  return subrouteHandler(parseSegmentAsSubroute(h)) as SubrouteConfig;
}

/** `handle_errors [<status codes>...]`: routes for errors (`4xx` ranges allowed). */
export function parseHandleErrors(h: Helper): ConfigValue[] {
  h.next();
  let expression = "";
  const args = h.remainingArgs();
  if (args.length > 0) {
    const codes: string[] = [];
    for (const v of args) {
      if (v.length !== 3) throw h.err(`bad status value '${v}'`);
      if (v.endsWith("xx")) {
        const c = v.slice(0, 1);
        if (!/^\d$/.test(c)) {
          throw h.err(
            `bad status value '${c}': strconv.Atoi: parsing ${JSON.stringify(c)}: invalid syntax`,
          );
        }
        if (expression !== "") expression += " || ";
        expression += `{http.error.status_code} >= ${c}00 && {http.error.status_code} <= ${c}99`;
        continue;
      }
      if (!/^[+-]?\d+$/.test(v)) {
        throw h.err(
          `bad status value '${v}': strconv.Atoi: parsing ${JSON.stringify(v)}: invalid syntax`,
        );
      }
      codes.push(v);
    }
    if (codes.length > 0) {
      if (expression !== "") expression += " || ";
      expression += `{http.error.status_code} in [${codes.join(", ")}]`;
    }
    h.reset();
    h.next();
    h.remainingArgs();
    h.prev();
  } else h.prev();
  const routes = parseSegmentAsSubroute(h);
  const wrapping: Route = { handle: [subrouteHandler(routes)] };
  if (expression !== "") wrapping.match = [{ expression }];
  return [{ class: "error_route", value: [wrapping] }];
}

/** The Gatehousefile syntax of `subroute`. */
export const syntax: SyntaxSet = {
  directives: { handle_errors: parseHandleErrors },
  handlerDirectives: { route: parseRoute, handle: parseHandle },
};
