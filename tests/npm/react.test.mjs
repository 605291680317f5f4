// The npm mirror's `./react` in Node 20: every page renders on the server with the mirror's own
// preact. Build first: deno task build:npm. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { authPageElement, describeError, renderAuthDocument } from "../../npm/react.js";
import { renderToString } from "../../npm/node_modules/preact-render-to-string/dist/index.mjs";

test("react mirror: whole documents for every page, with labels and autocomplete", () => {
  const pages = [
    [
      { page: "login", props: { forgotHref: "/forgot" }, sso: { providers: ["github"] } },
      "current-password",
    ],
    [{ page: "signup", props: {} }, "new-password"],
    [{ page: "verify", props: { email: "ada@example.com" } }, "one-time-code"],
    [{ page: "forgot", props: {} }, "email"],
    [{ page: "reset", props: { token: "t" } }, "new-password"],
  ];
  for (const [data, autocomplete] of pages) {
    const html = renderAuthDocument(data, { scriptSrc: "/auth-client.js" });
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes(`autocomplete="${autocomplete}"`), data.page);
    assert.match(html, /<label for="gh-[a-z]+-[a-z]+"/);
    assert.match(html, /aria-live="assertive"/);
  }
});

test("react mirror: style overrides and errors in words", () => {
  const html = renderToString(authPageElement({
    page: "login",
    props: { error: "<script>", styles: { button: { background: "black" } } },
  }));
  assert.match(html, /background:black/);
  assert.ok(html.includes(describeError("nope")));
  assert.ok(!html.includes("<script>"));
});
