/**
 * The default look of the sign-in pages, as plain style objects, and the per-element
 * overrides a site passes through the `styles` prop. No CSS files are involved: every element
 * carries its own inline style, so a page renders the same with or without a stylesheet.
 *
 * @module
 */

/** One element's inline style: CSS properties in camelCase (`fontSize`) with string values. */
export type StyleObject = Record<string, string | number>;

/**
 * The styleable elements of every page, by role:
 * - `page`: the outer `<main>` that centres the card;
 * - `card`: the box holding the title, form and links;
 * - `title`: the `<h1>`; `intro`: the sentence under it;
 * - `form`, `field` (one label + input pair), `label`, `input`, `button` (the submit button);
 * - `error`: the live region announcing errors; `notice`: the live region for good news;
 * - `links`: the row of secondary links; `link`: each of them;
 * - `divider`: the "or" line above single sign-on buttons;
 * - `sso`: the list of provider buttons; `ssoButton`: each provider link.
 */
export type StyleKey =
  | "page"
  | "card"
  | "title"
  | "intro"
  | "form"
  | "field"
  | "label"
  | "input"
  | "button"
  | "error"
  | "notice"
  | "links"
  | "link"
  | "divider"
  | "sso"
  | "ssoButton";

/**
 * Per-element style overrides. Each entry is merged over the default for that element:
 * properties you give replace the default's, the others stay.
 *
 * @example Restyle the button and the card, keep everything else
 * ```ts
 * import type { AuthStyles } from "@gatehouse/gatehouse/react";
 * const styles: AuthStyles = {
 *   button: { background: "#0f766e" },
 *   card: { boxShadow: "none", border: "2px solid #0f766e" },
 * };
 * ```
 */
export type AuthStyles = Partial<Record<StyleKey, StyleObject>>;

const font = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

/**
 * The documented default look: a centred white card on a light grey page, dark text with
 * WCAG AA contrast, a blue primary button, red errors and green notices. Focus stays visible:
 * no default removes the browser's focus outline.
 *
 * @example Read a default to build on it
 * ```ts
 * import { defaultStyles } from "@gatehouse/gatehouse/react";
 * const wider = { card: { ...defaultStyles.card, maxWidth: "32rem" } };
 * ```
 */
export const defaultStyles: Readonly<Record<StyleKey, StyleObject>> = {
  page: {
    minHeight: "100vh",
    margin: "0",
    padding: "3rem 1rem",
    boxSizing: "border-box",
    background: "#f3f4f6",
    fontFamily: font,
    color: "#111827",
  },
  card: {
    maxWidth: "24rem",
    margin: "0 auto",
    padding: "2rem",
    background: "#ffffff",
    borderRadius: "0.75rem",
    boxShadow: "0 1px 3px rgba(0,0,0,0.12), 0 8px 24px rgba(0,0,0,0.06)",
  },
  title: { fontSize: "1.5rem", lineHeight: "2rem", margin: "0 0 0.5rem", fontWeight: "650" },
  intro: { margin: "0 0 1.25rem", color: "#374151", lineHeight: "1.5" },
  form: { display: "flex", flexDirection: "column", gap: "1rem", margin: "0" },
  field: { display: "flex", flexDirection: "column", gap: "0.35rem" },
  label: { fontWeight: "600", fontSize: "0.95rem" },
  input: {
    font: "inherit",
    padding: "0.6rem 0.75rem",
    border: "1px solid #6b7280",
    borderRadius: "0.5rem",
    background: "#ffffff",
    color: "#111827",
  },
  button: {
    font: "inherit",
    fontWeight: "600",
    padding: "0.7rem 1rem",
    border: "none",
    borderRadius: "0.5rem",
    background: "#1d4ed8",
    color: "#ffffff",
    cursor: "pointer",
  },
  error: { color: "#b91c1c", fontWeight: "600", margin: "0 0 1rem", lineHeight: "1.4" },
  notice: { color: "#047857", fontWeight: "600", margin: "0 0 1rem", lineHeight: "1.4" },
  links: {
    display: "flex",
    flexWrap: "wrap",
    justifyContent: "space-between",
    gap: "0.5rem",
    marginTop: "1.25rem",
    fontSize: "0.95rem",
  },
  link: { color: "#1d4ed8", textDecoration: "underline" },
  divider: { textAlign: "center", color: "#4b5563", margin: "1.25rem 0 0.75rem" },
  sso: {
    display: "flex",
    flexDirection: "column",
    gap: "0.5rem",
    listStyle: "none",
    margin: "0",
    padding: "0",
  },
  ssoButton: {
    display: "block",
    textAlign: "center",
    padding: "0.6rem 1rem",
    border: "1px solid #6b7280",
    borderRadius: "0.5rem",
    color: "#111827",
    background: "#ffffff",
    textDecoration: "none",
    fontWeight: "600",
  },
};

/**
 * The style of one element: the default merged with the site's override, if any.
 *
 * @example
 * ```ts
 * import { styleFor } from "@gatehouse/gatehouse/react";
 * styleFor({ button: { background: "black" } }, "button").background; // "black"
 * ```
 */
export function styleFor(styles: AuthStyles | undefined, key: StyleKey): StyleObject {
  const override = styles?.[key];
  return override ? { ...defaultStyles[key], ...override } : defaultStyles[key];
}
