/**
 * The second step of a sign-in: a code of the authenticator app or a backup code, and
 * "remember this device".
 *
 * @module
 */
import type { FormPieces, OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { AuthStyles } from "./styles.ts";

/** Props of {@linkcode SecondFactorPage}. */
export interface SecondFactorPageProps {
  /** Where the form posts `code` (and `remember`); default `/api/auth/second-factor`. */
  action?: string;
  /** Called in the browser once signed in. */
  onSuccess?: OnSuccess;
  /** Days a remembered device skips this step; no checkbox when 0 (default 30). */
  rememberDays?: number;
  /** Link back to the sign-in page (another account, or start again). */
  loginHref?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Error code to show in words. */
  error?: string;
  /** Good news to show. */
  notice?: string;
  /** Heading; default "Two-step sign-in". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
}

/** Builds the SecondFactorPage component over a runtime and the shared form pieces. */
export function createSecondFactorPage<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): (props: SecondFactorPageProps) => E {
  const h = rt.createElement;
  return function SecondFactorPage(props: SecondFactorPageProps): E {
    const { styles } = props;
    const days = props.rememberDays ?? 30;
    return h(
      AuthCard,
      {
        title: props.title ?? "Two-step sign-in",
        intro: "Enter the 6-digit code from your authenticator app, or one of your backup codes.",
        styles,
      },
      h(AuthForm, {
        idPrefix: "gh-factor",
        action: props.action ?? "/api/auth/second-factor",
        fields: [
          {
            name: "code",
            label: "Code",
            type: "text",
            autocomplete: "one-time-code",
            inputMode: "text",
            minLength: 6,
          },
          ...(days > 0
            ? [{
              name: "remember",
              label: `Remember this device for ${days} days`,
              type: "checkbox" as const,
              autocomplete: "off",
            }]
            : []),
        ],
        submitLabel: "Continue",
        pendingLabel: "Checking…",
        onSuccess: props.onSuccess,
        error: props.error,
        notice: props.notice,
        messages: props.messages,
        styles,
      }),
      h(AuthLinks, { styles, links: [{ href: props.loginHref, label: "Start again" }] }),
    );
  };
}
