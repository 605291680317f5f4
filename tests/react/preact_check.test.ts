/**
 * The Preact build refuses elements of another copy of Preact where the two meet, instead of
 * rendering nothing: at the root of a render of its Preact, and in each component called by
 * another copy's renderer. (`tests/e2e/preact_jsr.test.ts` gets there with real apps.)
 */
import assert from "node:assert/strict";
import { h, render } from "preact";
import { renderToString } from "preact-render-to-string";
import { LoginPage, SsoButtons } from "../../preact.ts";
import { PREACT_MAJOR, PREACT_RANGE } from "../../lib/react/preact_check.ts";

/** An element as Preact 10 makes it (`constructor` an own `undefined`). */
const preact10Element = (type: unknown, props: object) => ({
  type,
  props,
  key: undefined,
  ref: undefined,
  __k: null,
  __: null,
  __b: 0,
  __e: null,
  __c: null,
  constructor: undefined,
  __v: -1,
  __i: -1,
  __u: 0,
});

Deno.test("the project's Preact is 11, in the supported range", () => {
  assert.equal(PREACT_MAJOR, 11);
  assert.equal(PREACT_RANGE, "^10.0.0 || ^11.0.0");
});

Deno.test("renderToString of the pages' Preact refuses an element of Preact 10", () => {
  assert.throws(
    () => renderToString(preact10Element(LoginPage, {}) as never),
    /a renderer of Preact 11 \(the one the pages import\) was given an element of Preact 10; the app has two copies of Preact/,
  );
  assert.throws(() => renderToString(preact10Element("p", {}) as never), /two copies of Preact/);
  // Its own elements, text and nothing render as before.
  assert.match(renderToString(h(LoginPage, { title: undefined })), /<form method="post"/);
  assert.equal(renderToString(h("p", null, "hi")), "<p>hi</p>");
  assert.equal(renderToString(null as never), "");
  assert.equal(renderToString("text" as never), "text");
});

Deno.test("a component called by another copy's renderer names the copies and the fix", () => {
  const self = { __v: preact10Element(SsoButtons, { providers: ["github"] }) };
  assert.throws(
    () => SsoButtons.call(self, { providers: ["github"] }),
    (e: Error) => {
      assert.match(
        e.message,
        /^@gatehouse\/gatehouse\/preact: SsoButtons is being rendered by Preact 10, while the pages import Preact 11; the app has two copies of Preact/,
      );
      assert.ok(e.message.includes('"npm:preact@^11.2.0": "npm:preact@<the app\'s version>"'));
      assert.ok(e.message.includes("Preact ^10.0.0 || ^11.0.0"));
      return true;
    },
  );
  // Called as a function outside a render, or by its own Preact: no check fails.
  assert.ok(SsoButtons({ providers: ["github"] }));
  assert.ok(SsoButtons.call({ __v: h(SsoButtons, { providers: [] }) }, { providers: ["github"] }));
});

Deno.test("the client render() of the pages' Preact meets the same root check", () => {
  // render() of the client calls the same root hook; a DOM-less parent is enough to reach it.
  assert.throws(
    () => render(preact10Element("p", {}) as never, { nodeType: 1 } as never),
    /given an element of Preact 10/,
  );
});
