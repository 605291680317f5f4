// Runs the core's shared test cases (tests/auth/core_cases/) in Node against the npm
// mirror built by `deno task build:npm`, with the fake OAuth provider served by node:http on
// loopback for the cases that need it. Run: node --test tests/npm/
import { test } from "node:test";
import { createServer } from "node:http";
import * as api from "../../npm/mod.js";
import { cases } from "../auth/core_cases/index.mjs";
import { fakeProvider } from "../auth/_fake_provider.mjs";

/** Serves a web-standard handler on 127.0.0.1 with an ephemeral port. */
async function serve(handler) {
  const server = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) =>
          Array.isArray(v) ? v.map((x) => [k, x]) : [[k, String(v)]]
        ),
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      });
      const response = await handler(request);
      res.writeHead(response.status, [...response.headers]);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

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
