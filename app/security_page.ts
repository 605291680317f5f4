/**
 * The security sections of the multi-user site's account page: "confirm it's you" (the
 * step-up, when the session is older than the changes allow), two-step sign-in (the
 * authenticator app and its backup codes), passkeys (the add form is hydrated by
 * `account_client.ts`; without JavaScript it stays hidden), and the sessions, each with what
 * it is, where from and when, to name or end.
 *
 * @module
 */
import { h } from "preact";
import type { Passkey, SecondFactors, UserSessionRecord } from "../d1.ts";
import { Card, Facts, Field, Table, When } from "./console/ui.ts";

/** What the sections show. */
export interface SecurityView {
  /** Mount path. */
  base: string;
  /** Whether the account has a password. */
  hasPassword: boolean;
  /** The second factor's state. */
  factors: SecondFactors | null;
  /** The account's passkeys. */
  passkeys: Passkey[];
  /** The recorded sessions (this one marked `current`). */
  sessions: UserSessionRecord[];
  /** Whether this session may make changes without confirming again. */
  fresh: boolean;
  /** Props of the passkey form that `account_client.ts` hydrates. */
  passkeyActions: { optionsAction: string; verifyAction: string };
}

const post = (action: string, button: string, fields: unknown[], variant = "secondary") =>
  h(
    "form",
    { method: "post", action, class: "inline" },
    fields,
    h("button", { type: "submit", class: variant }, button),
  );

const hidden = (name: string, value: string) => h("input", { type: "hidden", name, value });

/** The sections, in order. */
export function securityCards(v: SecurityView): unknown[] {
  const { base } = v;
  const f = v.factors;
  return [
    v.fresh ? null : h(
      Card,
      { key: "confirm", title: "Confirm it's you" },
      h(
        "p",
        null,
        "You signed in more than 5 minutes ago. To change your password, e-mail, sign-in " +
          "methods or delete the account, confirm it's you first.",
      ),
      h(
        "form",
        { method: "post", action: `${base}/account/confirm`, class: "stack" },
        v.hasPassword
          ? h(Field, {
            label: "Password",
            name: "password",
            type: "password",
            idPrefix: "confirm",
            attrs: { autocomplete: "current-password" },
          })
          : null,
        f?.totp
          ? h(Field, {
            label: v.hasPassword ? "Or a code from your authenticator app" : "Code from your app",
            name: "code",
            idPrefix: "confirm",
            attrs: { autocomplete: "one-time-code", inputmode: "numeric" },
          })
          : null,
        h("div", { class: "actions" }, h("button", { type: "submit" }, "Confirm")),
      ),
    ),
    h(
      Card,
      { key: "two-step", title: "Two-step sign-in" },
      f?.totp
        ? [
          h(Facts, {
            key: "f",
            items: [
              [
                "Authenticator app",
                h("span", null, "On since ", h(When, { ms: f.totpSince ?? 0 })),
              ],
              ["Backup codes left", h("span", { id: "backup-left" }, String(f.backupCodesLeft))],
              ["Remembered devices", String(f.trustedDevices.length)],
            ],
          }),
          h(
            "div",
            { key: "a", class: "actions" },
            post(`${base}/account/backup-codes`, "New backup codes", []),
            post(`${base}/account/totp/remove`, "Turn off two-step sign-in", [], "danger"),
          ),
        ]
        : [
          h(
            "p",
            { key: "p" },
            "Ask for a code from an authenticator app (or a backup code) after your password.",
          ),
          h(
            "a",
            { key: "a", class: "button", href: `${base}/account/totp` },
            "Set up an authenticator app",
          ),
        ],
    ),
    h(
      Card,
      { key: "passkeys", title: "Passkeys" },
      h(
        "p",
        null,
        "A passkey signs you in with your device's screen lock, no password or code needed.",
      ),
      h(Table, {
        caption: "Your passkeys",
        head: ["Name", "Added", "Last used", "Remove"],
        unlabelled: [3],
        empty: "No passkey yet.",
        rows: v.passkeys.map((k) => [
          h(
            "form",
            { method: "post", action: `${base}/account/passkeys/rename`, class: "inline" },
            hidden("id", k.id),
            h("input", {
              name: "name",
              value: k.name,
              maxLength: 100,
              required: true,
              "aria-label": `Passkey label: ${k.name}`,
            }),
            h("button", { type: "submit", class: "secondary" }, "Rename"),
          ),
          h(When, { ms: k.createdAt }),
          k.lastUsedAt ? h(When, { ms: k.lastUsedAt }) : "Never",
          post(`${base}/account/passkeys/remove`, "Remove", [hidden("id", k.id)], "danger"),
        ]),
      }),
      h("div", { id: "passkey-register" }),
      h("script", {
        type: "application/json",
        id: "passkey-register-data",
        dangerouslySetInnerHTML: {
          __html: JSON.stringify(v.passkeyActions).replace(/</g, "\\u003c"),
        },
      }),
      h("noscript", null, h("p", { class: "hint" }, "Adding a passkey needs JavaScript.")),
      v.hasPassword && v.passkeys.length > 0
        ? h(
          "div",
          { class: "actions" },
          post(`${base}/account/password/remove`, "Remove my password (passkeys only)", []),
        )
        : null,
    ),
    h(
      Card,
      { key: "sessions", title: "Sessions" },
      h(Table, {
        caption: "Where you are signed in",
        head: ["Device", "Place", "Signed in", "Last seen", "Label or end"],
        unlabelled: [4],
        empty: "No recorded session.",
        rows: v.sessions.map((s) => [
          h(
            "span",
            null,
            s.name ? h("strong", null, s.name, " · ") : null,
            s.device,
            s.current ? h("span", { class: "badge ok" }, " This device") : null,
          ),
          s.place ?? "—",
          h(When, { ms: s.createdAt }),
          h(When, { ms: s.lastSeenAt }),
          s.current
            ? post(`${base}/account/sessions/rename`, "Label it", [
              hidden("id", s.id),
              h("input", {
                name: "name",
                value: s.name ?? "",
                maxLength: 100,
                "aria-label": "What to call this device",
              }),
            ])
            : post(`${base}/account/sessions/end`, "End", [hidden("id", s.id)], "danger"),
        ]),
      }),
      h(
        "div",
        { class: "actions" },
        post(`${base}/account/sessions/others`, "End all other sessions", []),
        post(`${base}/account/sessions`, "End all sessions, on every device", []),
      ),
    ),
  ];
}
