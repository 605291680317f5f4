// Runs the core's shared test cases (tests/auth/core_cases/) in Node against the npm
// mirror built by `deno task build:npm`, with the fake OAuth provider served by node:http on
// loopback for the cases that need it. Run: node --test tests/npm/
import { test } from "node:test";
import { serve } from "./_serve.mjs";
import * as api from "../../npm/mod.js";
import { cases } from "../auth/core_cases/index.mjs";
import { fakeProvider } from "../auth/_fake_provider.mjs";

for (const c of cases) {
  test(c.name, async () => {
    if (!c.provider) return await c.fn({ api });
    const server = await serve(fakeProvider);
    try {
      await c.fn({ api, providerUrl: server.url });
    } finally {
      await server.close();
    }
  });
}
