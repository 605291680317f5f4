/**
 * The multi-user site's pages after sign-in, in sections: profile, password ("Set a password"
 * for an account made through a provider), e-mail, linked sign-ins, sessions and a danger
 * zone; the confirmation before deleting the account and the page after it; the pages of an
 * e-mail change link (used or expired links say so, with the next step). `users.ts` routes to
 * them.
 *
 * @module
 */
import { h } from "preact";
import type { LinkedSignIn, Session, User } from "../d1.ts";
import { describeError } from "../preact.ts";
import { fullDate } from "./dates.ts";
import { sitePageResponse } from "./site_page.ts";
import { Card, Facts, Field, When } from "./console/ui.ts";
import { securityCards, type SecurityView } from "./security_page.ts";

/** The site's name in page headers. */
export const USERS_SITE = "Multi-user demo";

/** What the account page shows. */
export interface AccountView {
  /** Mount path. */
  base: string;
  /** The signed-in user. */
  user: User;
  /** This browser's session. */
  session: Session;
  /** Provider sign-ins linked to the account. */
  linked: LinkedSignIn[];
  /** `?done=` code of the last change. */
  done?: string;
  /** `?to=` of an e-mail change just asked for. */
  to?: string;
  /** `?error=` code of the last change. */
  error?: string;
  /** Second factor, passkeys and recorded sessions (replaces the plain sessions section). */
  security?: SecurityView;
  /** The account page's script (the passkey form). */
  script?: string;
}

const PROVIDERS: Record<string, string> = {
  google: "Google",
  github: "GitHub",
  microsoft: "Microsoft",
};

function doneSentence(v: AccountView): string | undefined {
  switch (v.done) {
    case "name":
      return "Your name was saved.";
    case "password":
      return "Your password was changed. Your other devices were signed out.";
    case "password_set":
      return "Your password was set: you can sign in with it as well as with your provider.";
    case "totp_removed":
      return "Two-step sign-in is off: you sign in with your password alone.";
    case "passkey_added":
      return "Your passkey was added: use it the next time you sign in.";
    case "passkey_renamed":
      return "The passkey was renamed.";
    case "passkey_removed":
      return "The passkey was removed.";
    case "password_removed":
      return "Your password was removed: you sign in with a passkey now.";
    case "session_ended":
      return "That session was ended: the device is signed out.";
    case "others_ended":
      return "Every other session was ended.";
    case "session_renamed":
      return "This session's name was saved.";
    case "confirmed":
      return "Thanks: you can make changes for the next 5 minutes.";
    case "email_sent":
      return `Check your new inbox: we sent a link to ${v.to ?? "your new address"}. ` +
        "Your address changes once you open it, within 24 hours.";
    default:
      return v.done ? "Saved." : undefined;
  }
}

/** A change refused for an old session: the page's "Confirm it's you" is the way on. */
const STALE_SESSION = (v: AccountView) =>
  v.security && !v.security.fresh
    ? { reauth_required: "Confirm it's you first (just below), then try again." }
    : undefined;

const form = (action: string, button: string, children: unknown[], variant?: string) =>
  h(
    "form",
    { method: "post", action, class: "stack" },
    children,
    h("div", { class: "actions" }, h("button", { type: "submit", class: variant }, button)),
  );

/** The account page. */
export function accountPage(v: AccountView): Response {
  const { base, user: u, session } = v;
  const providerNames = v.linked.map((l) => PROVIDERS[l.provider] ?? l.provider);
  return sitePageResponse({
    site: USERS_SITE,
    home: `${base}/`,
    title: "Your account",
    who: u.email,
    signOut: `${base}/logout`,
    notice: doneSentence(v),
    error: v.error ? describeError(v.error, STALE_SESSION(v)) : undefined,
    script: v.script,
    body: [
      h(
        Card,
        { key: "profile", title: "Profile" },
        h(Facts, {
          items: [
            ["E-mail", h("span", { id: "email" }, u.email)],
            ["Name", u.name ? h("span", { id: "name" }, u.name) : "Not set"],
            ["Member since", h(When, { ms: u.createdAt })],
          ],
        }),
        form(`${base}/account/name`, "Save name", [
          h(Field, {
            key: "n",
            label: "Name",
            name: "name",
            value: u.name ?? "",
            hint: "Shown to you; leave it empty to remove it.",
            attrs: { maxLength: 100, autocomplete: "name" },
          }),
        ]),
      ),
      h(
        Card,
        { key: "password", title: "Password" },
        u.hasPassword
          ? form(`${base}/account/password`, "Change password", [
            h(Field, {
              key: "c",
              label: "Current password",
              name: "currentPassword",
              type: "password",
              required: true,
              attrs: { autocomplete: "current-password" },
            }),
            h(Field, {
              key: "n",
              label: "New password",
              name: "newPassword",
              type: "password",
              required: true,
              hint: "At least 8 characters. Your other devices are signed out.",
              attrs: { minLength: 8, autocomplete: "new-password" },
            }),
          ])
          : [
            h(
              "p",
              { key: "p" },
              `You sign in with ${
                providerNames.join(" or ") || "a provider"
              }. A password lets you sign in without it.`,
            ),
            form(`${base}/account/set-password`, "Set a password", [
              h(Field, {
                key: "n",
                label: "New password",
                name: "newPassword",
                type: "password",
                required: true,
                hint:
                  "At least 8 characters. Works within 5 minutes of signing in; after that, sign in again first.",
                attrs: { minLength: 8, autocomplete: "new-password" },
              }),
            ]),
          ],
      ),
      h(
        Card,
        { key: "email", title: "E-mail address" },
        h("p", null, "We send a link to the new address; the change happens when you open it."),
        form(`${base}/account/email`, "Change e-mail", [
          h(Field, {
            key: "e",
            label: "New e-mail",
            name: "newEmail",
            type: "email",
            required: true,
            attrs: { autocomplete: "email" },
          }),
          u.hasPassword
            ? h(Field, {
              key: "p",
              label: "Password",
              name: "password",
              type: "password",
              required: true,
              attrs: { autocomplete: "current-password" },
              idPrefix: "email",
            })
            : null,
        ]),
      ),
      h(
        Card,
        { key: "linked", title: "Linked sign-ins" },
        v.linked.length
          ? h(
            "ul",
            null,
            v.linked.map((l) =>
              h(
                "li",
                { key: l.provider + l.linkedAt },
                `${PROVIDERS[l.provider] ?? l.provider}${l.email ? ` (${l.email})` : ""}, linked `,
                h(When, { ms: l.linkedAt }),
              )
            ),
          )
          : h("p", null, "No provider is linked: you sign in with your e-mail and password."),
      ),
      ...(v.security ? securityCards(v.security) : []),
      v.security ? null : h(
        Card,
        { key: "sessions", title: "Sessions" },
        h(
          "p",
          null,
          "You signed in on this device ",
          h(When, { ms: session.issuedAt * 1000 }),
          "; this session ends ",
          h(When, { ms: session.expiresAt * 1000 }),
          ` (${fullDate(session.expiresAt * 1000)}).`,
        ),
        h(
          "div",
          { class: "actions" },
          h(
            "form",
            { method: "post", action: `${base}/account/sessions`, class: "inline" },
            h(
              "button",
              { type: "submit", class: "secondary" },
              "End all sessions, on every device",
            ),
          ),
        ),
      ),
      h(
        Card,
        { key: "danger", title: "Danger zone", class: "danger-zone" },
        h("p", null, "Deleting your account removes it and its linked sign-ins for good."),
        h("a", { class: "button danger", href: `${base}/account/delete` }, "Delete my account…"),
      ),
    ],
  });
}

/** The confirmation before deleting the account. */
export function deleteConfirmPage(base: string, u: User, error?: string): Response {
  return sitePageResponse({
    site: USERS_SITE,
    home: `${base}/`,
    title: "Delete your account?",
    who: u.email,
    signOut: `${base}/logout`,
    error: error === "confirm"
      ? "Nothing was deleted: tick the box to confirm that you want this."
      : error
      ? `Nothing was deleted. ${describeError(error)}`
      : undefined,
    body: h(
      Card,
      { class: "danger-zone" },
      h(
        "p",
        null,
        `The account ${u.email}, its linked sign-ins and its sessions are deleted at once. This cannot be undone.`,
      ),
      form(`${base}/account/delete`, "Delete my account", [
        u.hasPassword
          ? h(Field, {
            key: "p",
            label: "Your password",
            name: "password",
            type: "password",
            required: true,
            attrs: { autocomplete: "current-password" },
          })
          : h(
            "p",
            { key: "p", class: "hint" },
            "You signed in with a provider: this works within 5 minutes of signing in.",
          ),
        h(
          "label",
          { key: "c", class: "check" },
          h("input", { type: "checkbox", name: "confirm", value: "yes", required: true }),
          "I understand that this cannot be undone",
        ),
      ], "danger"),
      h("p", null, h("a", { href: `${base}/` }, "Keep my account")),
    ),
  }, error ? 400 : 200);
}

/** After the deletion. */
export function deletedPage(base: string, email: string, notified: boolean): Response {
  return sitePageResponse({
    site: USERS_SITE,
    home: `${base}/`,
    title: "Your account was deleted",
    notice: `The account ${email} no longer exists and you are signed out.`,
    body: [
      h(
        "p",
        { key: "n" },
        notified
          ? "We sent a last e-mail to that address to confirm it."
          : "We could not send the confirming e-mail, but the account is deleted.",
      ),
      h(
        "p",
        { key: "l" },
        h("a", { href: `${base}/signup` }, "Create a new account"),
        " · ",
        h("a", { href: "/" }, "Back to the app"),
      ),
    ],
  });
}

/** The outcome of opening an e-mail change link. */
export function emailChangePage(
  base: string,
  r: { ok: true; email: string } | { ok: false; error: string },
): Response {
  if (r.ok) {
    return sitePageResponse({
      site: USERS_SITE,
      home: `${base}/`,
      title: "E-mail changed",
      notice: `Your account now uses ${r.email}.`,
      body: h(
        "p",
        null,
        "For your safety every session ended: sign in with the new address. ",
        h("a", { href: `${base}/login?email=${encodeURIComponent(r.email)}` }, "Sign in"),
      ),
    });
  }
  const why = r.error === "invalid_token"
    ? "This link was already used, has expired (links work for 24 hours), or was replaced by a newer one."
    : r.error === "email_taken"
    ? "Another account uses that address now, so it cannot become yours."
    : describeError(r.error);
  return sitePageResponse({
    site: USERS_SITE,
    home: `${base}/`,
    title: "E-mail not changed",
    error: why,
    body: h(
      "p",
      null,
      "Your address is unchanged. To try again, sign in and ask for a new link on your account page. ",
      h("a", { href: `${base}/` }, "Go to your account"),
    ),
  }, 400);
}
