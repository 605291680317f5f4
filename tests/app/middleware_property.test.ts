/**
 * Property tests of the app-wide middlewares on the bytes a client controls (fast-check,
 * bounded): any `Host` over a raw socket, any `Origin` / `Sec-Fetch-Site` / `X-Forwarded-For` /
 * `Content-Length` value and method — never a 5xx or a throw, never a hang, and always the
 * documented answer (421 for an unlisted host, 403 for a cross-site post, 413 over the limit).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { withHost } from "./_raw.ts";
import { wellFormedHost } from "../../app/middleware/hosts.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const printable = (max: number) =>
  fc.stringMatching(new RegExp(`^[\\x21-\\x7e][\\x20-\\x7e]{0,${max}}$`));

Deno.test("property: any Host: 400 when malformed, 421 when not in APP_HOSTS, served when listed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-prop-host-" });
  const app = await createApp(
    loadAppEnv({ DATABASE_URL: `file:${dir}/app.db`, APP_HOSTS: "app.example" }),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  // what the mail API answers (a listed host on its path) is checked against its OpenAPI document
  const mail = new ResponseChecker();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          printable(80),
          fc.domain(),
          fc.constantFrom(
            "app.example",
            "APP.EXAMPLE",
            "app.example:443",
            "my_app",
            "a/b",
            "x?y",
            "a#b",
            "[::1",
            "évil",
            "A ",
            " app.example\t",
          ),
        ),
        fc.constantFrom(
          "/",
          "/owner/login",
          "/users/api/auth/forgot",
          "/api/account-docs/v2/items",
        ),
        async (host, path) => {
          const res = await withHost(server.addr.port, "GET", path, host);
          assert.ok(res.status < 500, `${JSON.stringify(host)} → ${res.status}`);
          // Leading and trailing spaces and tabs are not part of a field value (RFC 9110 §5.5):
          // the server sees "A" for "Host: A ".
          const value = host.replace(/^[ \t]+|[ \t]+$/g, "");
          const listed = value.toLowerCase() === "app.example";
          const expected = listed ? null : wellFormedHost(value) ? 421 : 400;
          if (expected) assert.equal(res.status, expected, JSON.stringify(host));
          else {assert.ok(
              ![400, 421].includes(res.status),
              `${JSON.stringify(host)} → ${res.status}`,
            );}
          if (listed && path.startsWith("/api/account-docs/v2/")) {
            await mail.checkRaw({ method: "GET", url: `http://app.example${path}` }, res);
          }
        },
      ),
      { numRuns: 150, examples: [["app.example", "/api/account-docs/v2/items"]] },
    );
    mail.assertClean();
    assert.ok(mail.seen.has("GET /items 401"), [...mail.seen].join(", "));
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("property: any browser headers, method and length on a state-changing route: the documented answer", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-prop-xsite-" });
  const app = await createApp(loadAppEnv({ DATABASE_URL: `file:${dir}/app.db` }));
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("POST", "PUT", "DELETE", "PATCH", "GET"),
        fc.option(
          fc.oneof(
            printable(40),
            fc.constantFrom("same-origin", "none", "cross-site", "same-site"),
          ),
        ),
        fc.option(
          fc.oneof(printable(60), fc.webUrl(), fc.constantFrom("null", "http://127.0.0.1")),
        ),
        fc.option(printable(60)),
        fc.nat(40_000),
        async (method, site, origin, forwarded, length) => {
          const headers = new Headers({ "content-type": "application/x-www-form-urlencoded" });
          if (site !== null) headers.set("sec-fetch-site", site);
          if (origin !== null) headers.set("origin", origin);
          if (forwarded !== null) headers.set("x-forwarded-for", forwarded);
          const body = method === "GET" ? undefined : "a".repeat(length);
          const res = await app.fetch(
            new Request("http://127.0.0.1/relay-demo/api/auth/logout", { method, headers, body }),
            { remoteAddr: { hostname: "127.0.0.1" } },
          );
          await res.body?.cancel();
          assert.ok(res.status < 500, `${res.status}`);
          const crossSite = site !== null
            ? site !== "same-origin" && site !== "none"
            : origin !== null && origin !== "http://127.0.0.1";
          if (method !== "GET" && crossSite) assert.equal(res.status, 403);
          else if (method !== "GET" && length > 16 * 1024) assert.equal(res.status, 413);
          assert.ok(res.headers.get("content-security-policy"), "headers on every answer");
        },
      ),
      { numRuns: 300 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
