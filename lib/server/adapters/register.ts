/**
 * Registers the standard config adapters and nothing else: `json5`, and `gatehousefile` (also
 * `caddyfile`), each loading its parser on first use (the Gatehousefile's with the syntax of
 * every module, but not the modules). What reading a config file needs, without the module
 * tables that provisioning one needs (`../standard.ts`): the primary process of worker
 * processes adapts configs and serves none.
 *
 * @module
 */
import "./json5.ts";
import "./gatehousefile/register.ts";
