/**
 * The console's shared pieces, as Preact elements rendered on the server: fields with their
 * labels, forms that post with the CSRF token, tables that scroll on a phone, dates in words,
 * badges and fact lists. Every form works without JavaScript.
 *
 * @module
 */
import { type ComponentChildren, h, type JSX } from "preact";
import { fullDate, isoDate, relativeDate } from "../dates.ts";

/** Field name of the CSRF token in every form. */
export const CSRF_FIELD = "_csrf";

/** A date in words, with the full date as its title. */
export function When(props: { ms: number; now?: number }): JSX.Element {
  return h(
    "time",
    { dateTime: isoDate(props.ms), title: fullDate(props.ms) },
    relativeDate(props.ms, props.now),
  );
}

/** The hidden CSRF input. */
export function Csrf(props: { token: string }): JSX.Element {
  return h("input", { type: "hidden", name: CSRF_FIELD, value: props.token });
}

/** Options of {@linkcode Field}. */
export interface FieldProps {
  /** Visible label. */
  label: string;
  /** Input name (also the base of its id). */
  name: string;
  /** Input type (default text); `textarea` for a text area. */
  type?: string;
  /** Current value. */
  value?: string;
  /** A sentence under the label (tied with `aria-describedby`). */
  hint?: string;
  /** Required field. */
  required?: boolean;
  /** Other input attributes. */
  attrs?: Record<string, unknown>;
  /** Id prefix when one page has the same name twice. */
  idPrefix?: string;
}

/** A labelled input (or text area). */
export function Field(p: FieldProps): JSX.Element {
  const id = `${p.idPrefix ?? "f"}-${p.name}`;
  const hintId = p.hint ? `${id}-hint` : undefined;
  const common = {
    id,
    name: p.name,
    required: p.required,
    "aria-describedby": hintId,
    ...p.attrs,
  };
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, p.label),
    p.hint ? h("p", { class: "hint", id: hintId }, p.hint) : null,
    p.type === "textarea"
      ? h("textarea", { ...common, spellcheck: false }, p.value ?? "")
      : h("input", { ...common, type: p.type ?? "text", value: p.value }),
  );
}

/** Options of {@linkcode PostForm}. */
export interface PostFormProps {
  /** Where the form posts. */
  action: string;
  /** The CSRF token. */
  csrf: string;
  /** The button's text. */
  label: string;
  /** Button look. */
  variant?: "primary" | "secondary" | "danger";
  /** Hidden fields. */
  hidden?: Record<string, string>;
  /** Fields before the button. */
  children?: ComponentChildren;
  /** `stack` (fields above each other) or `inline` (one row); default inline. */
  layout?: "stack" | "inline";
  /** Accessible name of the button when the text alone is ambiguous. */
  buttonLabel?: string;
  /** Form encoding (multipart for uploads). */
  enctype?: string;
}

/** A form that posts with the CSRF token. */
export function PostForm(p: PostFormProps): JSX.Element {
  return h(
    "form",
    { method: "post", action: p.action, class: p.layout ?? "inline", enctype: p.enctype },
    h(Csrf, { token: p.csrf }),
    Object.entries(p.hidden ?? {}).map(([name, value]) =>
      h("input", { type: "hidden", name, value, key: name })
    ),
    p.children,
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "submit",
        class: p.variant && p.variant !== "primary" ? p.variant : undefined,
        "aria-label": p.buttonLabel,
      }, p.label),
    ),
  );
}

/**
 * A table in a box that scrolls sideways on a narrow screen (and can be focused to scroll).
 * The headers of the `unlabelled` columns (a column of buttons) are read by screen readers
 * only: they show no text, and their cells no label on a phone.
 */
export function Table(p: {
  caption: string;
  head: string[];
  rows: ComponentChildren[][];
  empty?: string;
  numeric?: number[];
  unlabelled?: number[];
}): JSX.Element {
  if (p.rows.length === 0) return h("p", { class: "muted" }, p.empty ?? "Nothing here yet.");
  const num = new Set(p.numeric ?? []);
  const quiet = new Set(p.unlabelled ?? []);
  // On a phone each row is a card (console.css): a cell names its column (`data-label`), and
  // the roles keep the table a table for screen readers whatever its display.
  return h(
    "div",
    { class: "table-wrap", role: "region", "aria-label": p.caption, tabIndex: 0 },
    h(
      "table",
      { role: "table" },
      h("caption", null, p.caption),
      h(
        "thead",
        { role: "rowgroup" },
        h(
          "tr",
          { role: "row" },
          p.head.map((t, i) =>
            h("th", {
              scope: "col",
              role: "columnheader",
              key: t + i,
              class: num.has(i) ? "num" : undefined,
            }, quiet.has(i) ? h("span", { class: "sr-only" }, t) : t)
          ),
        ),
      ),
      h(
        "tbody",
        { role: "rowgroup" },
        p.rows.map((cells, r) =>
          h(
            "tr",
            { key: r, role: "row" },
            cells.map((cell, i) =>
              h("td", {
                key: i,
                role: "cell",
                "data-label": quiet.has(i) ? "" : p.head[i],
                class: num.has(i) ? "num" : undefined,
              }, cell)
            ),
          )
        ),
      ),
    ),
  );
}

/** A short label in colour (with its meaning in the text, never in the colour alone). */
export function Badge(p: { tone?: "ok" | "warn" | "bad" | "info"; text: string }): JSX.Element {
  return h("span", { class: p.tone ? `badge ${p.tone}` : "badge" }, p.text);
}

/** A list of label/value pairs. */
export function Facts(p: { items: [string, ComponentChildren][] }): JSX.Element {
  return h(
    "dl",
    { class: "facts" },
    p.items.flatMap(([label, value]) => [
      h("dt", { key: `t-${label}` }, label),
      h("dd", { key: `d-${label}` }, value),
    ]),
  );
}

/** A white card with an optional heading. */
export function Card(
  p: { title?: string; children?: ComponentChildren; class?: string },
): JSX.Element {
  return h(
    "section",
    { class: p.class ? `card ${p.class}` : "card", "aria-label": p.title },
    p.title ? h("h2", null, p.title) : null,
    p.children,
  );
}

/** A secret shown once, with the sentence that says so. */
export function ShownOnce(
  p: { label: string; value: string; id: string; hint?: string },
): JSX.Element {
  return h(
    "div",
    { class: "field" },
    h("p", { class: "label", id: `${p.id}-label` }, p.label),
    h("p", { class: "secret", id: p.id, "aria-labelledby": `${p.id}-label` }, p.value),
    h(
      "p",
      { class: "hint" },
      p.hint ?? "It is shown only this once: copy it now.",
    ),
    h("button", {
      type: "button",
      class: "secondary",
      "data-copy": p.id,
      hidden: true,
    }, "Copy to clipboard"),
  );
}
