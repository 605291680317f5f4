/**
 * The pieces every sign-in page shares: the card around a page, a labelled field, the row of
 * secondary links, and the form itself.
 *
 * The form is a plain `<form method="post">` so it works with JavaScript off (the browser
 * posts it and follows the site's redirect). Once hydrated, it posts the same fields with
 * `fetch` and `Accept: application/json`, shows the site's `{error}` answer in words in an
 * `aria-live` region, and hands a success answer to `onSuccess`.
 *
 * @module
 */
import { describeError, type ErrorMessages } from "./messages.ts";
import type { AuthNode, AuthRuntime } from "./runtime.ts";
import { type AuthStyles, styleFor } from "./styles.ts";

/**
 * What a site answered to a successful JSON submission (any JSON object). By convention
 * `redirect` names the page to go to next; when the server answered with a redirect that
 * `fetch` followed, `redirect` is that final URL.
 */
export interface AuthResult {
  /** Where to go next, when the site says so. */
  redirect?: string;
  /** Any other field of the site's answer. */
  [key: string]: unknown;
}

/** Called in the browser after a successful submission, with the site's answer. */
export type OnSuccess = (result: AuthResult) => void;

/** One input of a form. */
export interface FieldSpec {
  /** Form field name posted to the site. */
  name: string;
  /** Visible label text. */
  label: string;
  /** Input type (a checkbox posts `value` `1` when ticked and is never required). */
  type: "email" | "password" | "text" | "checkbox";
  /** The `autocomplete` token, e.g. `email`, `current-password`, `one-time-code`. */
  autocomplete: string;
  /** Initial value. */
  value?: string;
  /** Shown but not editable. */
  readOnly?: boolean;
  /** Virtual keyboard hint, e.g. `numeric`. */
  inputMode?: "numeric" | "email" | "text";
  /** Minimum length the browser checks before posting. */
  minLength?: number;
  /** Pattern the browser checks before posting. */
  pattern?: string;
}

/** The e-mail field every page uses (`autocomplete="email"`), optionally shown read-only. */
export function emailField(value?: string, readOnly?: boolean): FieldSpec {
  return { name: "email", label: "E-mail", type: "email", autocomplete: "email", value, readOnly };
}

/** Props shared by the form of every page. */
export interface AuthFormProps {
  /** Prefix of element ids; unique per page. */
  idPrefix: string;
  /** URL the form posts to. */
  action: string;
  /** The inputs, in order. */
  fields: FieldSpec[];
  /** Hidden fields posted with the form. */
  hidden?: Record<string, string>;
  /** Text of the submit button. */
  submitLabel: string;
  /** Text of the submit button while a submission is under way. */
  pendingLabel: string;
  /** Called after a successful submission (JavaScript on). */
  onSuccess?: OnSuccess;
  /** When set, shown in the notice region after a successful submission. */
  successMessage?: string;
  /** Error code to show on first render (from the URL after a redirect). */
  error?: string;
  /** Good news to show on first render (text chosen by the site). */
  notice?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
  /** Per-element style overrides. */
  styles?: AuthStyles;
}

/** Props of {@linkcode FormPieces.AuthCard}. */
export interface AuthCardProps<N = AuthNode> {
  /** The `<h1>`. */
  title: string;
  /** A sentence under the title. */
  intro?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** The card's content. */
  children?: N;
}

/** Props of {@linkcode FormPieces.AuthLinks}. */
export interface AuthLinksProps {
  /** The links, in order; links without an `href` are left out. */
  links: { href?: string; label: string }[];
  /** Per-element style overrides. */
  styles?: AuthStyles;
}

/** The shared pieces of every page, bound to one runtime. */
export interface FormPieces<E> {
  /** The card that holds a page: `<main>`, a heading, an optional sentence, the content. */
  AuthCard(props: AuthCardProps<unknown>): E;
  /** A row of secondary links; nothing when no link has an `href`. */
  AuthLinks(props: AuthLinksProps): E | null;
  /** The form of a page; see the module documentation for its two modes. */
  AuthForm(props: AuthFormProps): E;
}

/** Builds the shared pieces over a runtime's `createElement` and `useState`. */
export function createFormPieces<E>(rt: AuthRuntime<E>): FormPieces<E> {
  const h = rt.createElement;

  function AuthCard(props: AuthCardProps<unknown>): E {
    const { styles } = props;
    return h(
      "main",
      { style: styleFor(styles, "page") },
      h(
        "div",
        { style: styleFor(styles, "card") },
        h("h1", { style: styleFor(styles, "title") }, props.title),
        props.intro ? h("p", { style: styleFor(styles, "intro") }, props.intro) : null,
        props.children,
      ),
    );
  }

  function AuthLinks(props: AuthLinksProps): E | null {
    const links = props.links.filter((l) => l.href);
    if (links.length === 0) return null;
    return h(
      "nav",
      { style: styleFor(props.styles, "links"), "aria-label": "Other options" },
      links.map((l) =>
        h("a", { key: l.href, href: l.href, style: styleFor(props.styles, "link") }, l.label)
      ),
    );
  }

  function AuthForm(props: AuthFormProps): E {
    const { idPrefix, styles } = props;
    const [error, setError] = rt.useState(
      props.error ? describeError(props.error, props.messages) : "",
    );
    const [notice, setNotice] = rt.useState(props.notice ?? "");
    const [pending, setPending] = rt.useState(false);
    const errorId = `${idPrefix}-error`;

    // React's synthetic event and Preact's DOM event both carry these two.
    async function submit(
      event: { currentTarget: unknown; preventDefault(): void },
    ): Promise<void> {
      const form = event.currentTarget as { action: string };
      if (typeof fetch !== "function" || typeof FormData !== "function") return;
      event.preventDefault();
      if (pending) return;
      setPending(true);
      setError("");
      setNotice("");
      try {
        const body = new URLSearchParams(
          new (FormData as unknown as FormDataOfForm)(form) as unknown as Record<string, string>,
        );
        const response = await fetch(form.action, {
          method: "POST",
          body,
          headers: { accept: "application/json" },
          credentials: "same-origin",
        });
        const answer = await readAnswer(response);
        if (response.ok) {
          if (props.successMessage) setNotice(props.successMessage);
          props.onSuccess?.(answer);
        } else {
          const code = typeof answer.error === "string" ? answer.error : "unknown";
          setError(describeError(code, props.messages));
        }
      } catch {
        setError(describeError("network", props.messages));
      } finally {
        setPending(false);
      }
    }

    const invalid = error !== "";
    return h(
      rt.Fragment,
      null,
      // The live regions sit above the form, always present so later messages are announced;
      // empty, they take no room.
      h(
        "div",
        null,
        h(
          "div",
          { id: errorId, role: "alert", "aria-live": "assertive", "aria-atomic": "true" },
          error ? h("p", { style: styleFor(styles, "error") }, error) : null,
        ),
        h(
          "div",
          {
            id: `${idPrefix}-notice`,
            role: "status",
            "aria-live": "polite",
            "aria-atomic": "true",
          },
          notice ? h("p", { style: styleFor(styles, "notice") }, notice) : null,
        ),
      ),
      h(
        "form",
        { method: "post", action: props.action, onSubmit: submit },
        // The layout lives on an inner box, so the <form> tag itself is plain.
        h(
          "div",
          { style: styleFor(styles, "form") },
          // `value` last: React writes an input's value after its other attributes.
          Object.entries(props.hidden ?? {}).map(([name, value]) =>
            h("input", { key: name, type: "hidden", name, value })
          ),
          props.fields.map((f) => {
            const id = `${idPrefix}-${f.name}`;
            if (f.type === "checkbox") {
              return h(
                "div",
                { key: f.name, style: styleFor(styles, "field") },
                h(
                  "label",
                  { htmlFor: id, style: styleFor(styles, "label") },
                  h("input", { id, name: f.name, type: "checkbox", value: "1" }),
                  ` ${f.label}`,
                ),
              );
            }
            return h(
              "div",
              { key: f.name, style: styleFor(styles, "field") },
              h("label", { htmlFor: id, style: styleFor(styles, "label") }, f.label),
              h("input", {
                id,
                name: f.name,
                type: f.type,
                autoComplete: f.autocomplete,
                required: true,
                readOnly: f.readOnly,
                inputMode: f.inputMode,
                minLength: f.minLength,
                pattern: f.pattern,
                "aria-invalid": invalid ? "true" : undefined,
                "aria-describedby": invalid ? errorId : undefined,
                // A read-only field looks inactive unless the site styles inputs itself.
                style: f.readOnly
                  ? { ...styleFor(undefined, "input"), background: "#f3f4f6", ...styles?.input }
                  : styleFor(styles, "input"),
                defaultValue: f.value,
              }),
            );
          }),
          h(
            "button",
            {
              type: "submit",
              style: styleFor(styles, "button"),
              disabled: pending,
              "aria-busy": pending ? "true" : undefined,
            },
            pending ? props.pendingLabel : props.submitLabel,
          ),
        ),
      ),
    );
  }

  return { AuthCard, AuthLinks, AuthForm };
}

/** The DOM's `FormData` constructor that reads a `<form>` (absent from Deno's own types). */
type FormDataOfForm = new (form: unknown) => FormData;

async function readAnswer(response: Response): Promise<AuthResult> {
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    try {
      const parsed = await response.json();
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        const answer = parsed as AuthResult;
        if (answer.redirect === undefined && response.redirected) answer.redirect = response.url;
        return answer;
      }
    } catch {
      // not JSON after all
    }
    return {};
  }
  if (!response.ok && type.startsWith("text/plain")) {
    // A plain-text failure such as the spec's 403 "forbidden": a bare code is kept as the code.
    const text = (await response.text()).trim();
    return /^[a-z_]{1,64}$/.test(text) ? { error: text } : {};
  }
  await response.body?.cancel();
  return response.redirected ? { redirect: response.url } : {};
}
