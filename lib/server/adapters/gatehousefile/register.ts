/**
 * Registers the `gatehousefile` config adapter (also `caddyfile`) without loading it: the
 * parser, the directive table and every directive's setup load on the first adaptation, so a
 * server started from a JSON config does not carry them (~2.5 MiB and ~15 ms at start,
 * measured on the server's standard modules).
 *
 * @module
 */
import { registerAdapter } from "../../adapter.ts";

registerAdapter(
  {
    name: "gatehousefile",
    // text without a file name is named for the adapter it was asked for, as Caddy names a
    // text/caddyfile body "Caddyfile" in its errors
    async adapt(body, o) {
      const { adaptGatehousefile } = await import("./mod.ts");
      return adaptGatehousefile(body, {
        filename: o?.filename || (o?.as === "caddyfile" ? "Caddyfile" : undefined),
      });
    },
  },
  "caddyfile",
);
