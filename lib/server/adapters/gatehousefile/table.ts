/**
 * Every directive, global option and module syntax the Gatehousefile knows: the syntax sets
 * the module tables name (loaded here, when the adapter loads), and the assembler's own (global
 * options, site directives). A module's syntax lives beside the module.
 *
 * @module
 */
import { parseLog } from "./logs.ts";
import { registerGeneralOptions } from "./options.ts";
import { registerTLSOptions } from "./options_tls.ts";
import {
  registerDirective,
  registerSyntaxSet,
  type SyntaxEntry,
  type SyntaxSet,
} from "../../caddyfile/registry.ts";
import { HANDLERS, SYNTAX_ONLY } from "../../http/handlers/mod.ts";
import { MATCHERS } from "../../http/matchers/mod.ts";
import { IP_SOURCES } from "../../http/ip_sources.ts";
import { LISTENER_WRAPPERS } from "../../listeners/mod.ts";
import { DNS_PROVIDERS, TLS_MODULES } from "../../tls/mod.ts";
import { LOGGING_MODULES } from "../../logging/mod.ts";
import { STORAGE_MODULES } from "../../storage/register.ts";
import { syntax as metricsSyntax } from "../../metrics/caddyfile.ts";
import { syntax as tracingSyntax } from "../../tracing/caddyfile.ts";
import { parseBind } from "./site_directives.ts";

// `bind`, then the tls app's syntax (with the `tls` directive), before the handlers': a
// misspelt directive as close to two names is taken for the one registered first (`ls` for
// `tls`, not `fs`)
registerDirective("bind", parseBind);

// the syntax the module tables name (each set once: several entries may share a file)
const sets = new Set<SyntaxSet>();
const tables: readonly (readonly Pick<SyntaxEntry, "syntax">[])[] = [
  TLS_MODULES,
  DNS_PROVIDERS,
  HANDLERS,
  SYNTAX_ONLY,
  MATCHERS,
  IP_SOURCES,
  LISTENER_WRAPPERS,
  LOGGING_MODULES,
  STORAGE_MODULES,
];
for (const table of tables) for (const e of table) if (e.syntax) sets.add(await e.syntax());
for (const set of sets) registerSyntaxSet(set);
// the handlers of the metrics and tracing apps, which register their own modules
registerSyntaxSet(metricsSyntax);
registerSyntaxSet(tracingSyntax);

// global options
registerGeneralOptions();
registerTLSOptions();

// the assembler's own directives
registerDirective("log", (h) => parseLog(h));
