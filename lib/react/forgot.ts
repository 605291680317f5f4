/**
 * The forgot-password page: asks for the e-mail to send a reset link to.
 *
 * @module
 */
import { emailField, type FormPieces, type OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { AuthStyles } from "./styles.ts";

/** Props of {@linkcode ForgotPasswordPage}. */
export interface ForgotPasswordPageProps {
  /** Where the form posts `email`; default `/api/auth/forgot`. */
  action?: string;
  /** Called in the browser after the site accepted the request. */
  onSuccess?: OnSuccess;
  /** Link back to the sign-in page. */
  loginHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Error code to show in words. */
  error?: string;
  /**
   * Set when the request was already sent (after a redirect with JavaScript off): the page
   * then shows the "check your inbox" sentence.
   */
  sent?: boolean;
  /** E-mail to fill in. */
  email?: string;
  /** Heading; default "Reset your password". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
}

/** The sentence shown once a reset was requested (whether or not the account exists). */
export const RESET_SENT =
  "If an account exists for that address, we sent it a link to choose a new password.";

/** Builds the ForgotPasswordPage component over a runtime and the shared form pieces. */
export function createForgotPasswordPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): (props: ForgotPasswordPageProps) => E {
  const h = rt.createElement;
  return function ForgotPasswordPage(props: ForgotPasswordPageProps): E {
    const { styles } = props;
    return h(
      AuthCard,
      {
        title: props.title ?? "Reset your password",
        intro: "Enter your e-mail address and we will send you a link to choose a new password.",
        styles,
      },
      h(AuthForm, {
        idPrefix: "gh-forgot",
        action: props.action ?? "/api/auth/forgot",
        fields: [
          emailField(props.email),
        ],
        submitLabel: "Send reset link",
        pendingLabel: "Sending…",
        onSuccess: props.onSuccess,
        successMessage: RESET_SENT,
        error: props.error,
        notice: props.sent ? RESET_SENT : undefined,
        messages: props.messages,
        styles,
      }),
      h(AuthLinks, { styles, links: [{ href: props.loginHref, label: "Back to sign in" }] }),
    );
  };
}
