/**
 * Passkey buttons for the pages: sign in with a passkey (a button, and the autofill list of
 * the username field when the browser offers it), and add a passkey to the signed-in
 * account. Both are rendered hidden and shown by the browser once the page is hydrated and
 * the browser has WebAuthn: with JavaScript off nothing of them shows, and the password form
 * is the way in.
 *
 * @module
 */
import type { OnSuccess } from "./form.ts";
import { describeError, type ErrorMessages } from "./messages.ts";
import {
  autofillAvailable,
  type PasskeyActions,
  passkeyRegister,
  passkeysAvailable,
  passkeySignIn,
} from "./passkey.ts";
import type { AuthRuntime } from "./runtime.ts";
import { type AuthStyles, styleFor } from "./styles.ts";

/** Props of {@linkcode PasskeySignIn}. */
export interface PasskeySignInProps {
  /** The site's two passkey sign-in actions. */
  actions: PasskeyActions;
  /** Offer the passkeys in the username field's autofill list too (default true). */
  autofill?: boolean;
  /** Text of the button; default "Use a passkey". */
  label?: string;
  /** Called with the site's answer once signed in (default of the documents: its `redirect`). */
  onSuccess?: OnSuccess;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
  /** Per-element style overrides. */
  styles?: AuthStyles;
}

/** Props of {@linkcode PasskeyRegister}. */
export interface PasskeyRegisterProps {
  /** The site's two passkey registration actions. */
  actions: PasskeyActions;
  /** Text of the button; default "Add a passkey". */
  label?: string;
  /** Called with the site's answer once added. */
  onSuccess?: OnSuccess;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
  /** Per-element style overrides. */
  styles?: AuthStyles;
}

const shown = new WeakSet<object>();

/** Shows a hidden element once, in a browser with WebAuthn; then runs `then`. */
function reveal(then?: () => void) {
  return (el: { hidden: boolean } | null) => {
    if (!el || shown.has(el)) return;
    shown.add(el);
    if (!passkeysAvailable()) return;
    el.hidden = false;
    then?.();
  };
}

/** Builds the passkey components over a runtime. */
export function createPasskeyButtons<E>(rt: AuthRuntime<E>): {
  PasskeySignIn(props: PasskeySignInProps): E;
  PasskeyRegister(props: PasskeyRegisterProps): E;
} {
  const h = rt.createElement;

  function PasskeySignIn(props: PasskeySignInProps): E {
    const [error, setError] = rt.useState("");
    const [busy, setBusy] = rt.useState(false);
    const { styles } = props;
    const run = async (autofill: boolean) => {
      if (!autofill) {
        setBusy(true);
        setError("");
      }
      const r = await passkeySignIn(props.actions, { autofill });
      if (!autofill) setBusy(false);
      if (r.ok) props.onSuccess?.(r.answer);
      else if (r.error !== "cancelled") setError(describeError(r.error, props.messages));
    };
    const start = () => {
      if (props.autofill === false) return;
      void autofillAvailable().then((yes) => {
        if (yes) void run(true);
      });
    };
    return h(
      "div",
      { ref: reveal(start), hidden: true, "data-passkey": "sign-in" },
      h(
        "div",
        { role: "alert", "aria-live": "assertive", "aria-atomic": "true" },
        error ? h("p", { style: styleFor(styles, "error") }, error) : null,
      ),
      h(
        "button",
        {
          type: "button",
          style: styleFor(styles, "button"),
          disabled: busy,
          "aria-busy": busy ? "true" : undefined,
          onClick: () => void run(false),
        },
        props.label ?? "Use a passkey",
      ),
    );
  }

  function PasskeyRegister(props: PasskeyRegisterProps): E {
    const [error, setError] = rt.useState("");
    const [busy, setBusy] = rt.useState(false);
    const { styles } = props;
    const run = async (event: { currentTarget: unknown }) => {
      const form = (event.currentTarget as { form?: { elements: Record<string, unknown> } }).form;
      const field = form?.elements?.["passkeyName"] as { value?: string } | undefined;
      setBusy(true);
      setError("");
      const r = await passkeyRegister(props.actions, { name: field?.value?.trim() || undefined });
      setBusy(false);
      if (r.ok) props.onSuccess?.(r.answer);
      else if (r.error !== "cancelled") setError(describeError(r.error, props.messages));
    };
    return h(
      "form",
      {
        ref: reveal(),
        hidden: true,
        "data-passkey": "register",
        onSubmit: (e: { preventDefault(): void }) => e.preventDefault(),
      },
      h(
        "div",
        { role: "alert", "aria-live": "assertive", "aria-atomic": "true" },
        error ? h("p", { style: styleFor(styles, "error") }, error) : null,
      ),
      h(
        "div",
        { style: styleFor(styles, "field") },
        h(
          "label",
          { htmlFor: "gh-passkey-name", style: styleFor(styles, "label") },
          "Passkey label (optional)",
        ),
        h("input", {
          id: "gh-passkey-name",
          name: "passkeyName",
          type: "text",
          maxLength: 100,
          autoComplete: "off",
          style: styleFor(styles, "input"),
        }),
      ),
      h(
        "button",
        {
          type: "button",
          style: styleFor(styles, "button"),
          disabled: busy,
          "aria-busy": busy ? "true" : undefined,
          onClick: (e: { currentTarget: unknown }) => void run(e),
        },
        props.label ?? "Add a passkey",
      ),
    );
  }

  return { PasskeySignIn, PasskeyRegister };
}
