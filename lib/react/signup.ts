/**
 * The sign-up page: e-mail and a new password; the site then sends a one-time code.
 *
 * @module
 */
import { emailField, type FormPieces, type OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthNode, AuthRuntime } from "./runtime.ts";
import { type AuthStyles, styleFor } from "./styles.ts";

/** Props of {@linkcode SignupPage}. */
export interface SignupPageProps<N = AuthNode> {
  /** Where the form posts `email` and `password`; default `/api/auth/signup`. */
  action?: string;
  /** Called in the browser after the site accepted the sign-up (the code was sent). */
  onSuccess?: OnSuccess;
  /** Link to the sign-in page. */
  loginHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Shown under the form after an "or" line, typically {@linkcode SsoButtons}. */
  ssoSlot?: N;
  /** Error code to show in words. */
  error?: string;
  /** E-mail to fill in. */
  email?: string;
  /** Shortest password the browser accepts before posting; default 8. */
  minLength?: number;
  /** Heading; default "Create an account". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
}

/** Builds the SignupPage component over a runtime and the shared form pieces. */
export function createSignupPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): (props: SignupPageProps<unknown>) => E {
  const h = rt.createElement;
  return function SignupPage(props: SignupPageProps<unknown>): E {
    const { styles } = props;
    return h(
      AuthCard,
      { title: props.title ?? "Create an account", styles },
      h(AuthForm, {
        idPrefix: "gh-signup",
        action: props.action ?? "/api/auth/signup",
        fields: [
          emailField(props.email),
          {
            name: "password",
            label: "Password",
            type: "password",
            autocomplete: "new-password",
            minLength: props.minLength ?? 8,
          },
        ],
        submitLabel: "Create account",
        pendingLabel: "Creating…",
        onSuccess: props.onSuccess,
        error: props.error,
        messages: props.messages,
        styles,
      }),
      props.ssoSlot
        ? [
          h("p", { key: "or", style: styleFor(styles, "divider") }, "or"),
          h("div", { key: "sso" }, props.ssoSlot),
        ]
        : null,
      h(AuthLinks, {
        styles,
        links: [{ href: props.loginHref, label: "Already have an account? Sign in" }],
      }),
    );
  };
}
