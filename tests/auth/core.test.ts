/**
 * Runs the core's shared test cases (`_core_cases.mjs`) in Deno against `mod.ts`, with the
 * fake OAuth provider served on loopback for the cases that need it.
 *
 * @module
 */
import * as api from "../../mod.ts";
// @ts-types="./_core_cases.d.ts"
import { cases } from "./_core_cases.mjs";
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
