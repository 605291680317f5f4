/**
 * The two element types of the public API, declared here so the API does not expose
 * preact's internal JSX namespace. Every page returns an {@linkcode AuthElement} (a preact
 * virtual DOM node); slots accept any {@linkcode AuthNode}.
 *
 * @module
 */

/**
 * A rendered element: what preact's `h()` returns. Render it with `preact-render-to-string`
 * or mount it with preact's `render`/`hydrate`.
 */
export interface AuthElement {
  /** The element's tag name or component. */
  type: unknown;
  /** The element's props. */
  props: unknown;
  /** The element's key, if any. */
  key: unknown;
}

/** Content of a slot: an element, text, nothing, or a list of them (preact's children). */
export type AuthNode = AuthElement | object | string | number | bigint | boolean | null | undefined;
