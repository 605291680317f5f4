/**
 * Setting up an authenticator app: the QR code of the `otpauth://` URI (and the key to type
 * by hand), a first code to confirm, then the 10 backup codes, shown once, to download or
 * print. With JavaScript on, the codes replace the form in place; with it off, the site
 * answers the form with the backup-codes page.
 *
 * @module
 */
import type { AuthResult, FormPieces, OnSuccess } from "./form.ts";
import type { ErrorMessages } from "./messages.ts";
import type { AuthRuntime } from "./runtime.ts";
import { type AuthStyles, styleFor } from "./styles.ts";

/** Props of {@linkcode TotpSetupPage}. */
export interface TotpSetupPageProps {
  /** Where the form posts `code`; default `/api/account/totp/confirm`. */
  action?: string;
  /** The QR code of the URI, an SVG document (`totpQrSvg` of `/d1`). */
  qrSvg: string;
  /** The key in base32, for typing it by hand. */
  secret: string;
  /** Where to go once the backup codes are kept (default `/`). */
  continueHref?: string;
  /** Called in the browser with the site's answer (its `backupCodes` are shown). */
  onSuccess?: OnSuccess;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Error code to show in words. */
  error?: string;
  /** Heading; default "Set up an authenticator app". */
  title?: string;
  /** The site's own sentences for error codes. */
  messages?: ErrorMessages;
}

/** Props of {@linkcode BackupCodesPage}. */
export interface BackupCodesPageProps {
  /** The backup codes, shown once. */
  codes: string[];
  /** Where to go once they are kept (default `/`). */
  continueHref?: string;
  /** The site's name, in the downloaded file. */
  appName?: string;
  /** Per-element style overrides. */
  styles?: AuthStyles;
  /** Heading; default "Your backup codes". */
  title?: string;
}

/** The key in groups of four, as apps show it. */
const grouped = (s: string) => s.replace(/(.{4})(?=.)/g, "$1 ");

const shown = new WeakSet<object>();
const revealPrint = (el: { hidden: boolean } | null) => {
  if (!el || shown.has(el)) return;
  shown.add(el);
  if (typeof (globalThis as { print?: unknown }).print === "function") el.hidden = false;
};

/** Builds the TOTP setup pages over a runtime and the shared form pieces. */
export function createTotpPages<E>(
  rt: AuthRuntime<E>,
  { AuthCard, AuthForm, AuthLinks }: FormPieces<E>,
): {
  TotpSetupPage(props: TotpSetupPageProps): E;
  BackupCodesPage(props: BackupCodesPageProps): E;
  BackupCodes(props: BackupCodesPageProps): E;
} {
  const h = rt.createElement;

  function BackupCodes(props: BackupCodesPageProps): E {
    const { styles } = props;
    const text = `${props.appName ? `${props.appName}: ` : ""}backup codes. Each works once.\n\n` +
      props.codes.join("\n") + "\n";
    return h(
      "div",
      { "data-backup-codes": "" },
      h(
        "p",
        { style: styleFor(styles, "intro") },
        "Keep these codes somewhere safe. Each signs you in once if you lose your app. " +
          "They are shown only now.",
      ),
      h(
        "ol",
        {
          "aria-label": "Backup codes",
          style: { fontFamily: "ui-monospace, monospace", fontSize: "1.05rem", lineHeight: 1.8 },
        },
        props.codes.map((c) => h("li", { key: c }, c)),
      ),
      h(
        "p",
        null,
        h(
          "a",
          {
            href: `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`,
            download: "backup-codes.txt",
            style: styleFor(styles, "link"),
          },
          "Download the codes",
        ),
        " ",
        h(
          "button",
          {
            type: "button",
            ref: revealPrint,
            hidden: true,
            style: styleFor(styles, "button"),
            onClick: () => (globalThis as unknown as { print(): void }).print(),
          },
          "Print the codes",
        ),
      ),
      h(
        "p",
        null,
        h(
          "a",
          { href: props.continueHref ?? "/", style: styleFor(styles, "link") },
          "I have kept them: continue",
        ),
      ),
    );
  }

  function BackupCodesPage(props: BackupCodesPageProps): E {
    return h(
      AuthCard,
      { title: props.title ?? "Your backup codes", styles: props.styles },
      h(BackupCodes, props),
    );
  }

  function TotpSetupPage(props: TotpSetupPageProps): E {
    const { styles } = props;
    const [codes, setCodes] = rt.useState<string[] | null>(null);
    if (codes) {
      return h(BackupCodesPage, { codes, continueHref: props.continueHref, styles });
    }
    const image = `data:image/svg+xml;base64,${btoa(props.qrSvg)}`;
    const done = (answer: AuthResult) => {
      const list = answer.backupCodes;
      if (Array.isArray(list) && list.every((c) => typeof c === "string")) setCodes(list);
      props.onSuccess?.(answer);
    };
    return h(
      AuthCard,
      {
        title: props.title ?? "Set up an authenticator app",
        intro: "Scan this code with your authenticator app, then enter the 6-digit code it shows.",
        styles,
      },
      h("img", {
        src: image,
        width: 200,
        height: 200,
        alt: "QR code to scan with an authenticator app",
        style: { display: "block", margin: "0 auto 1rem" },
      }),
      h(
        "p",
        { style: styleFor(styles, "intro") },
        "Can't scan it? Type this key into the app: ",
        h("code", {
          "data-totp-key": props.secret,
          style: { fontSize: "1rem", wordBreak: "break-all" },
        }, grouped(props.secret)),
      ),
      h(AuthForm, {
        idPrefix: "gh-totp",
        action: props.action ?? "/api/account/totp/confirm",
        fields: [
          {
            name: "code",
            label: "Code from the app",
            type: "text",
            autocomplete: "one-time-code",
            inputMode: "numeric",
            pattern: "[0-9 ]*",
          },
        ],
        submitLabel: "Turn on two-step sign-in",
        pendingLabel: "Checking…",
        onSuccess: done,
        error: props.error,
        messages: props.messages,
        styles,
      }),
      h(AuthLinks, { styles, links: [{ href: props.continueHref, label: "Not now" }] }),
    );
  }

  return { TotpSetupPage, BackupCodesPage, BackupCodes };
}
