/**
 * The reset-password page: the target of the link in the reset e-mail.
 *
 * @module
 */
import type { FormPieces, OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { AuthStyles } from "./styles.ts";

/** Props of {@linkcode ResetPasswordPage}. */
export interface ResetPasswordPageProps {
  /** The reset token from the link (`?token=`); posted back as the hidden field `token`. */
  token: string;
  /** Where the form posts `token` and `password`; default `/api/auth/reset`. */
  action?: string;
  /** Called in the browser after the password was changed. */
  onSuccess?: OnSuccess;
  /** Link back to the sign-in page. */
  loginHref?: string;
  /** Link to ask for a new reset link. */
  forgotHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Error code to show in words. */
  error?: string;
  /** Shortest password the browser accepts before posting; default 8. */
  minLength?: number;
  /** Heading; default "Choose a new password". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
}

/** Builds the ResetPasswordPage component over a runtime and the shared form pieces. */
export function createResetPasswordPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): (props: ResetPasswordPageProps) => E {
  const h = rt.createElement;
  return function ResetPasswordPage(props: ResetPasswordPageProps): E {
    const { styles } = props;
    return h(
      AuthCard,
      { title: props.title ?? "Choose a new password", styles },
      h(AuthForm, {
        idPrefix: "gh-reset",
        action: props.action ?? "/api/auth/reset",
        fields: [{
          name: "password",
          label: "New password",
          type: "password",
          autocomplete: "new-password",
          minLength: props.minLength ?? 8,
        }],
        hidden: { token: props.token },
        submitLabel: "Save new password",
        pendingLabel: "Saving…",
        onSuccess: props.onSuccess,
        error: props.error,
        messages: props.messages,
        styles,
      }),
      h(AuthLinks, {
        styles,
        links: [
          { href: props.loginHref, label: "Back to sign in" },
          { href: props.forgotHref, label: "Send a new link" },
        ],
      }),
    );
  };
}
