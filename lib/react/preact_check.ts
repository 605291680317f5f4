/**
 * The Preact build's checks: that the Preact it imports is one the pages support (10 or 11),
 * and that no element of another copy of Preact meets it.
 *
 * Two copies of Preact in one app break the pages without a word: a renderer skips the elements
 * of another copy (Preact 11's `renderToString` of an element made by Preact 10 returns `""`),
 * and hooks find no component. The usual way to get there is a Deno app on Preact 10 that
 * imports the JSR package, whose Preact build imports `npm:preact@^11.2.0` (a Deno specifier
 * takes one plain range): Deno then gives the app's `preact-render-to-string` the highest Preact
 * of the graph, the pages' 11, and the app's own elements are Preact 10's. Each Preact major
 * marks its elements: `constructor` is an own `undefined` on Preact 10's and `Symbol.for("pv")`
 * on Preact 11's. So the checks look at the marks where the two copies meet:
 *
 * - the root of every render of the pages' Preact (`options.__`, the hook both majors and
 *   `preact-render-to-string` call with the element to render, before they skip it);
 * - each component, called by a renderer with the renderer's component object as `this`,
 *   whose `__v` is the element being rendered (the field name of both majors and of
 *   `preact-render-to-string`);
 * - the `preact-render-to-string` the pages import, once as they load: Deno resolves the app's
 *   to the same copy, and when it is bound to another Preact than the pages' (a lock file made
 *   before the app mapped the JSR package's Preact to its own still holds it so) it renders
 *   neither copy's pages.
 *
 * @module
 */
import { h, options } from "preact";

/** The range of Preact the pages support, as the npm mirror's peer dependency says it. */
export const PREACT_RANGE = "^10.0.0 || ^11.0.0";

/** What the error says to do; the specifier is the Preact build's import on JSR. */
export const PREACT_FROM_JSR = "npm:preact@^11.2.0";

/** The Preact build's `preact/hooks` import on JSR, which the fix maps too. */
export const PREACT_HOOKS_FROM_JSR: string = `npm:/${PREACT_FROM_JSR.slice(4)}/hooks`;

const PREACT_11_MARK = Symbol.for("pv");

/** The major version of a Preact whose elements carry `mark`, or null for another Preact. */
function majorOf(mark: unknown): 10 | 11 | null {
  if (mark === undefined) return 10;
  if (mark === PREACT_11_MARK) return 11;
  return null;
}

const OWN_MARK = (h("i", null) as { constructor?: unknown }).constructor;

/** The major version of the Preact the pages import (10 or 11), or null when unsupported. */
export const PREACT_MAJOR: 10 | 11 | null = majorOf(OWN_MARK);

/** Throws unless the Preact the pages import is 10 or 11. */
export function assertSupportedPreact(): void {
  if (PREACT_MAJOR !== null) return;
  throw new Error(
    `@gatehouse/gatehouse/preact supports Preact ${PREACT_RANGE}; the preact it imports is ` +
      "another version (its elements are not Preact 10's or 11's). Install preact 10 or 11.",
  );
}

/** The major of the other copy of Preact that made `node`, or false when it is no such element. */
function foreignMajor(node: unknown): 10 | 11 | null | false {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return false;
  if (!("type" in node) || !("props" in node) || !Object.hasOwn(node, "constructor")) {
    return false;
  }
  const mark = (node as { constructor?: unknown }).constructor;
  if (mark === OWN_MARK) return false;
  const major = majorOf(mark);
  return major === null && typeof mark === "function" ? false : major;
}

type RootHook = (this: unknown, vnode: unknown, parent: unknown) => void;
const ROOT = "__";
const WATCHING = Symbol.for("gatehouse.preact.watching");

/**
 * Makes every render of the pages' Preact refuse an element of another copy of Preact, instead
 * of rendering nothing. Installed once per copy; the hook that was there before still runs.
 */
export function watchForeignElements(): void {
  const hooks = options as unknown as Record<string | symbol, unknown>;
  if (hooks[WATCHING]) return;
  hooks[WATCHING] = true;
  const previous = hooks[ROOT] as RootHook | undefined;
  hooks[ROOT] = function (this: unknown, vnode: unknown, parent: unknown) {
    const other = foreignMajor(vnode);
    if (other !== false) {
      throw otherPreactError(
        `a renderer of Preact ${PREACT_MAJOR} (the one the pages import) was given an ` +
          `element of ${other === null ? "another Preact" : `Preact ${other}`}`,
      );
    }
    previous?.call(this, vnode, parent);
  } satisfies RootHook;
}

/**
 * Throws unless `renderToString` (the pages' `preact-render-to-string`) renders the pages'
 * Preact: an element of that Preact must come out as HTML, not `""`.
 */
export function assertRendererSharesPreact(renderToString: (vnode: never) => string): void {
  if (renderToString(h("i", null) as never) === "<i></i>") return;
  throw new Error(
    `@gatehouse/gatehouse/preact: its preact-render-to-string is bound to another copy of ` +
      `Preact than the pages' Preact ${PREACT_MAJOR}, and renders nothing of them; the app ` +
      `has two copies of Preact. When deno.json maps the JSR package's Preact ` +
      `("${PREACT_FROM_JSR}", "${PREACT_HOOKS_FROM_JSR}") to the app's, a deno.lock written ` +
      `before that still binds the renderer to the other: delete deno.lock and run again ` +
      `(docs/react.md, "Installing").`,
  );
}

/**
 * Throws when `self` (the `this` a component was called with) is the component of a renderer
 * of another copy of Preact. A component called as a plain function (no renderer) is not
 * checked.
 */
export function assertThisPreact(self: unknown, component: string): void {
  const vnode = (self as { __v?: unknown } | undefined)?.__v;
  const other = foreignMajor(vnode);
  if (other === false) return;
  throw otherPreactError(
    `${component} is being rendered by ${other === null ? "another Preact" : `Preact ${other}`}` +
      `, while the pages import Preact ${PREACT_MAJOR}`,
  );
}

/** The error for two copies of Preact; `what` says where they met. */
export function otherPreactError(what: string): Error {
  return new Error(
    `@gatehouse/gatehouse/preact: ${what}; the app has two copies of Preact, and a renderer ` +
      `skips the other copy's elements. The pages support Preact ${PREACT_RANGE} and must ` +
      `share the app's. A Deno app on Preact 10 that imports the JSR package gets this: the ` +
      `Preact build there imports ${PREACT_FROM_JSR}. Map that specifier to the app's Preact ` +
      `in deno.json ("imports": {"${PREACT_FROM_JSR}": "npm:preact@<the app's version>", ` +
      `"${PREACT_HOOKS_FROM_JSR}": "npm:/preact@<the app's version>/hooks"}), or import the ` +
      `npm package instead (docs/react.md, "Installing").`,
  );
}
