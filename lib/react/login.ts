/**
 * The sign-in page: e-mail and password, links to sign-up and password reset, and a slot for
 * single sign-on buttons.
 *
 * @module
 */
import { emailField, type FormPieces, type OnSuccess } from "./form.ts";
import type { PasskeyActions } from "./passkey.ts";
import type { PasskeySignInProps } from "./passkey_button.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthNode, AuthRuntime } from "./runtime.ts";
import { type AuthStyles, styleFor } from "./styles.ts";

/** Props of {@linkcode LoginPage}. */
export interface LoginPageProps<N = AuthNode> {
  /** Where the form posts `email` and `password`; default `/api/auth/login`. */
  action?: string;
  /** Called in the browser after a successful sign-in with the site's JSON answer. */
  onSuccess?: OnSuccess;
  /** Link to the sign-up page; no link when omitted. */
  signupHref?: string;
  /** Link to the forgot-password page; no link when omitted. */
  forgotHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Shown under the form after an "or" line, typically {@linkcode SsoButtons}. */
  ssoSlot?: N;
  /** Error code to show in words, e.g. from `?error=` or `?oauth_error=`. */
  error?: string;
  /** Good news to show, e.g. "Your password was changed. Sign in with the new one." */
  notice?: string;
  /** E-mail to fill in. */
  email?: string;
  /** Posted back as the hidden field `next` (where to go after signing in). */
  next?: string;
  /** Heading; default "Sign in". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
  /**
   * Offer passkeys: a "Use a passkey" button and the passkeys in the e-mail field's
   * autofill list (`autocomplete="username webauthn"`), shown only once JavaScript runs.
   */
  passkey?: PasskeyActions;
}

/** Builds the LoginPage component over a runtime and the shared form pieces. */
export function createLoginPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
  passkeys?: { PasskeySignIn(props: PasskeySignInProps): E },
): (props: LoginPageProps<unknown>) => E {
  const h = rt.createElement;
  return function LoginPage(props: LoginPageProps<unknown>): E {
    const { styles } = props;
    return h(
      AuthCard,
      { title: props.title ?? "Sign in", styles },
      h(AuthForm, {
        idPrefix: "gh-login",
        action: props.action ?? "/api/auth/login",
        fields: [
          props.passkey
            ? { ...emailField(props.email), autocomplete: "username webauthn" }
            : emailField(props.email),
          {
            name: "password",
            label: "Password",
            type: "password",
            autocomplete: "current-password",
          },
        ],
        hidden: props.next ? { next: props.next } : undefined,
        submitLabel: "Sign in",
        pendingLabel: "Signing in…",
        onSuccess: props.onSuccess,
        error: props.error,
        notice: props.notice,
        messages: props.messages,
        styles,
      }),
      props.passkey && passkeys
        ? h(passkeys.PasskeySignIn, {
          actions: props.passkey,
          onSuccess: props.onSuccess,
          messages: props.messages,
          styles,
        })
        : null,
      props.ssoSlot
        ? [
          h("p", { key: "or", style: styleFor(styles, "divider") }, "or"),
          h("div", { key: "sso" }, props.ssoSlot),
        ]
        : null,
      h(AuthLinks, {
        styles,
        links: [
          { href: props.forgotHref, label: "Forgot your password?" },
          { href: props.signupHref, label: "Create an account" },
        ],
      }),
    );
  };
}
