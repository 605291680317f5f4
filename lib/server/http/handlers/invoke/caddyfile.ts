/**
 * Gatehousefile syntax of the `invoke` handler: `invoke [<matcher>] <name>` runs the named
 * route `&(name) { ... }`.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { Token } from "../../../caddyfile/lexer.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { InvokeConfig } from "./config.ts";

/** `invoke <name>`: runs a named route (`&(name) { ... }`). */
export function parseInvoke(h: Helper): InvokeConfig {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  const name = h.val();
  if (h.next() || h.nextBlock(0)) throw h.argErr();
  const invoked = (h.scope.state.named_route ??= new Map<string, Token>()) as Map<string, Token>;
  if (!invoked.has(name)) invoked.set(name, h.token());
  return { handler: "invoke", name };
}

/** The Gatehousefile syntax of `invoke`. */
export const syntax: SyntaxSet = { handlerDirectives: { invoke: parseInvoke } };
