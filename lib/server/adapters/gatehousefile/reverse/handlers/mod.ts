/**
 * The handler table of the JSON → Gatehousefile direction: handler module name → the function
 * writing it as a directive. A new handler is one file plus one line here.
 *
 * @module
 */
import type { HandlerReverser } from "../../../../caddyfile/writer/context.ts";
import { HANDLERS as HANDLER_TABLE, SYNTAX_ONLY } from "../../../../http/handlers/mod.ts";
import { writer as metrics } from "../../../../metrics/writer.ts";
import { writer as tracing } from "../../../../tracing/writer.ts";

const FROM_TABLE: [string, HandlerReverser][] = await Promise.all(
  [...HANDLER_TABLE, ...SYNTAX_ONLY].filter((e) => e.writer).map(async (e) =>
    [e.id.slice("http.handlers.".length), await e.writer!()] as [string, HandlerReverser]
  ),
);

/** Handler module name → reverser: the writers the handlers' table names, and the rest. */
export const HANDLERS: Record<string, HandlerReverser> = {
  ...Object.fromEntries(FROM_TABLE),
  metrics,
  tracing,
};
