/**
 * The React build's check that the React rendering its components is the one it imports.
 *
 * Two copies of React in one app break the pages: elements of one copy are not elements to
 * the other's renderer ("Objects are not valid as a React child"), and hooks find no
 * dispatcher. The usual way to get there is a Deno app on React 18 that imports the JSR
 * package, whose React build imports `npm:react@^19.0.0` (JSR takes one plain range per
 * import). So the components check, each time they render, what React itself checks before a
 * hook ("Invalid hook call"): that a renderer of their own copy of React is rendering now,
 * i.e. that the copy's current hooks dispatcher is set. It is read from the copy's shared
 * internals (`H` in React 19, `ReactCurrentDispatcher.current` in React 18), and only read;
 * a React that has neither (a future version, `preact/compat`) is not checked.
 *
 * @module
 */
// @ts-types="@types/react"
import * as React from "react";

/** What the error says to do; the specifier is the React build's import on JSR. */
export const REACT_FROM_JSR = "npm:react@^19.0.0";

type Internals19 = { H?: unknown };
type Internals18 = { ReactCurrentDispatcher?: { current?: unknown } };

/**
 * True while a renderer of this copy of React renders, false when none does (another copy's
 * renderer is calling the component, or no render at all), undefined when this React keeps
 * its dispatcher elsewhere.
 */
export function renderingWithThisReact(): boolean | undefined {
  const r = React as unknown as Record<string, unknown>;
  const v19 = r.__CLIENT_INTERNALS_DO_NOT_USE_OR_WARN_USERS_THEY_CANNOT_UPGRADE as
    | Internals19
    | undefined;
  if (v19 && typeof v19 === "object" && "H" in v19) return v19.H != null;
  const v18 = r.__SECRET_INTERNALS_DO_NOT_USE_OR_YOU_WILL_BE_FIRED as Internals18 | undefined;
  const dispatcher = v18?.ReactCurrentDispatcher;
  if (dispatcher && typeof dispatcher === "object" && "current" in dispatcher) {
    return dispatcher.current != null;
  }
  return undefined;
}

/**
 * The error for two copies of React: `what` is what met the other copy, a component's name
 * (rendered by the other copy's renderer, or called as a function outside a render) or
 * `renderAuthDocument` (given the other copy's `renderToString`).
 */
export function otherReactError(what: string): Error {
  const subject = what === "renderAuthDocument"
    ? "the renderToString given to renderAuthDocument belongs to a copy of React other than " +
      "the one the pages import"
    : `${what} is being rendered by a copy of React other than the one it imports`;
  const component = what === "renderAuthDocument"
    ? ""
    : ` A component is also rendered as an element (<${what} />), not called as a function ` +
      "outside a render.";
  return new Error(
    `@gatehouse/gatehouse/react: ${subject} (React ${React.version}); the app has two copies ` +
      `of React. A Deno app on React 18 that imports the JSR package gets this: the React ` +
      `build there imports ${REACT_FROM_JSR}. Map that specifier to the app's React in ` +
      `deno.json ("imports": {"${REACT_FROM_JSR}": "npm:react@<the app's version>"}), or ` +
      `import the npm package instead (docs/react.md, "Installing").${component}`,
  );
}

/** Throws {@linkcode otherReactError} unless a renderer of this copy of React is rendering. */
export function assertThisReact(component: string): void {
  if (renderingWithThisReact() === false) throw otherReactError(component);
}
