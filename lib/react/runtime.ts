/**
 * The one thing the sign-in pages need from a UI library, injected: `createElement`,
 * `Fragment` and `useState`. The pages are written once over this interface; `react.ts` binds
 * it to React (18 or 19) and `preact.ts` to Preact, so both builds share every element, prop,
 * style and message.
 *
 * Elements are created with React's DOM prop names (`htmlFor`, `autoComplete`, `readOnly`,
 * `inputMode`, `minLength`, `defaultValue`), which Preact accepts and renders to the same
 * attributes, so the markup is the same in every runtime.
 *
 * @module
 */

/** A component as the pages define it: props in, an element (or nothing) out. */
// deno-lint-ignore no-explicit-any
export type AuthComponent<E> = (props: any) => E | null;

/**
 * The element factory and state hook of a UI library, typed by its element type `E`
 * (React's `ReactElement`, Preact's `VNode`).
 */
export interface AuthRuntime<E> {
  /** `React.createElement` / Preact's `h`. */
  createElement(
    type: string | AuthComponent<E> | unknown,
    props: object | null,
    ...children: unknown[]
  ): E;
  /** `React.Fragment` / Preact's `Fragment`. */
  Fragment: unknown;
  /** `React.useState` / `preact/hooks`' `useState`, with a plain initial value. */
  useState<S>(initial: S): [S, (next: S) => void];
}

/**
 * Content of a slot (`ssoSlot`, `children`) when the runtime is not known: an element, text,
 * nothing, or a list of them. The React build narrows it to `ReactNode`, the Preact build to
 * `ComponentChildren`.
 */
export type AuthNode = object | string | number | bigint | boolean | null | undefined;

/**
 * An element of the Preact build, as its public API names it (what Preact's `h()` returns),
 * declared here so the API does not expose Preact's internal types. Render it with
 * `preact-render-to-string` or mount it with Preact's `render`/`hydrate`.
 */
export interface AuthElement {
  /** The element's tag name or component. */
  type: unknown;
  /** The element's props. */
  props: unknown;
  /** The element's key, if any. */
  key: unknown;
}
