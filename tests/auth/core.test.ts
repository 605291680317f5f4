/**
 * Runs the core's shared test cases (`core_cases/`) in Deno against `mod.ts`, with the
 * fake OAuth provider served on loopback for the cases that need it.
 *
 * @module
 */
import * as api from "../../mod.ts";
// @ts-types="./core_cases/index.d.ts"
import { cases } from "./core_cases/index.mjs";
// @ts-types="./_fake_provider.d.ts"
import { fakeProvider } from "./_fake_provider.mjs";

for (const c of cases) {
  Deno.test(c.name, async () => {
    if (!c.provider) return await c.fn({ api });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      fakeProvider,
    );
    try {
      await c.fn({ api, providerUrl: `http://127.0.0.1:${server.addr.port}` });
    } finally {
      await server.shutdown();
    }
  });
}
