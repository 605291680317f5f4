/**
 * The verify-e-mail page: enter the one-time code sent after sign-up.
 *
 * @module
 */
import { emailField, type FormPieces, type OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { AuthStyles } from "./styles.ts";

/** Props of {@linkcode VerifyEmailPage}. */
export interface VerifyEmailPageProps {
  /** Where the form posts `email` and `code`; default `/api/auth/verify`. */
  action?: string;
  /** Called in the browser after the code was accepted (the site has issued the session). */
  onSuccess?: OnSuccess;
  /** The address the code was sent to; shown read-only when given. */
  email?: string;
  /** Link to sign up again (for a new code). */
  signupHref?: string;
  /** Link to the sign-in page. */
  loginHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Error code to show in words. */
  error?: string;
  /** Good news to show, e.g. "We sent a code to ...". */
  notice?: string;
  /** Heading; default "Check your e-mail". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
  /** More links under the page's own, e.g. a development outbox that holds the code. */
  moreLinks?: { href: string; label: string }[];
}

/** Builds the VerifyEmailPage component over a runtime and the shared form pieces. */
export function createVerifyEmailPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): (props: VerifyEmailPageProps) => E {
  const h = rt.createElement;
  return function VerifyEmailPage(props: VerifyEmailPageProps): E {
    const { styles } = props;
    return h(
      AuthCard,
      {
        title: props.title ?? "Check your e-mail",
        intro: "Enter the code we sent to your e-mail address to finish creating your account.",
        styles,
      },
      h(AuthForm, {
        idPrefix: "gh-verify",
        action: props.action ?? "/api/auth/verify",
        fields: [
          emailField(props.email, props.email !== undefined && props.email !== ""),
          {
            name: "code",
            label: "Code",
            type: "text",
            autocomplete: "one-time-code",
            inputMode: "numeric",
            pattern: "[0-9 ]*",
          },
        ],
        submitLabel: "Verify",
        pendingLabel: "Checking…",
        onSuccess: props.onSuccess,
        error: props.error,
        notice: props.notice,
        messages: props.messages,
        styles,
      }),
      h(AuthLinks, {
        styles,
        links: [
          { href: props.signupHref, label: "Send a new code" },
          { href: props.loginHref, label: "Sign in" },
          ...(props.moreLinks ?? []),
        ],
      }),
    );
  };
}
