/**
 * The sign-in side of one account on the users screen: its second factor and passkeys (with
 * the operator's recovery, removing a lost authenticator app) and its sign-in events, newest
 * first (`listAuthEvents`), a page at a time.
 *
 * @module
 */
import { h } from "preact";
import type { ComponentChildren } from "preact";
import {
  authEventStore,
  type AuthEventType,
  getSecondFactors,
  listAuthEvents,
  listPasskeys,
  resetSecondFactor,
  type StoredAuthEvent,
} from "../../d1.ts";
import type { ConsoleRequest, ScreenRoute } from "./context.ts";
import { Card, Facts, PostForm, Table, When } from "./ui.ts";

/** Events per page on an account's page. */
export const EVENTS_PAGE_SIZE = 25;

const WORDS: Record<AuthEventType, string> = {
  "sign_in.succeeded": "Signed in",
  "sign_in.failed": "Sign-in failed",
  "sign_in.throttled": "Sign-in refused (too many tries)",
  "sign_in.second_factor_required": "Password right, second factor asked",
  "factor.added": "Factor added",
  "factor.removed": "Factor removed",
  "backup_codes.regenerated": "New backup codes",
  "passkey.used": "Signed in with a passkey",
  "session.ended": "Session ended",
  "password.changed": "Password changed",
  "email.changed": "E-mail address changed",
  "step_up.succeeded": "Confirmed it was them",
};

function details(e: StoredAuthEvent): string {
  return Object.entries(e.detail)
    .filter(([k]) => k !== "sessionId" && k !== "passkeyId")
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");
}

/** The cards of an account's sign-in side, for the users screen's detail page. */
export async function signInCards(
  req: ConsoleRequest,
  userId: string,
  at: string,
): Promise<ComponentChildren[]> {
  const { db } = req.services;
  const before = Number(req.c.req.query("events_before") ?? "");
  const [factors, passkeys, events] = await Promise.all([
    getSecondFactors(db, { userId }),
    listPasskeys(db, userId),
    listAuthEvents(db, {
      userId,
      limit: EVENTS_PAGE_SIZE,
      before: Number.isSafeInteger(before) && before > 0 ? before : undefined,
    }),
  ]);
  const f = factors.ok ? factors.factors : null;
  const rows = events.ok
    ? events.events.map((e) => [
      h(When, { ms: e.at }),
      WORDS[e.type] ?? e.type,
      details(e),
      e.client ?? "—",
    ])
    : [];
  return [
    h(
      Card,
      { key: "factors", title: "Second factor and passkeys" },
      h(Facts, {
        items: [
          ["Authenticator app", f?.totp ? h(When, { ms: f.totpSince ?? 0 }) : "Not set up"],
          ["Backup codes left", f?.totp ? String(f.backupCodesLeft) : "—"],
          ["Trusted devices", f ? String(f.trustedDevices.length) : "—"],
          ["Passkeys", passkeys.ok ? String(passkeys.passkeys.length) : "—"],
        ],
      }),
      f?.totp
        ? [
          h(
            "p",
            { key: "p" },
            "If they lost their app and every backup code, and you checked who is asking, " +
              "remove the authenticator app: they then sign in with the password alone.",
          ),
          h(PostForm, {
            key: "f",
            action: `${at}/reset-factor`,
            csrf: req.csrf,
            label: "Remove the authenticator app",
            variant: "secondary",
          }),
        ]
        : null,
    ),
    h(
      Card,
      { key: "events", title: "Sign-in events" },
      events.ok
        ? h(Table, {
          caption: "Sign-in events, newest first",
          head: ["When", "What", "Details", "Client"],
          rows,
          empty: "No sign-in events recorded for this account.",
        })
        : h("p", null, "The events could not be read just now."),
      events.ok && events.next
        ? h("p", null, h("a", { href: `${at}?events_before=${events.next}` }, "Older events"))
        : null,
    ),
  ];
}

async function resetFactor(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const r = await resetSecondFactor(req.services.db, {
    userId: id,
    onEvent: authEventStore(req.services.db),
  });
  const at = `${req.services.base}/users/${encodeURIComponent(id)}`;
  if (!r.ok) return req.c.redirect(`${at}?error=${r.error}`, 303);
  if (r.removed) {
    await req.audit({ action: "user.reset_second_factor", target: `user:${id}` });
  }
  return req.c.redirect(`${at}?done=${r.removed ? "factor_reset" : "unchanged"}`, 303);
}

/** The action routes of this part of the users screen. */
export const signInActionRoutes: ScreenRoute[] = [
  { method: "POST", path: "/:id/reset-factor", handle: resetFactor },
];
