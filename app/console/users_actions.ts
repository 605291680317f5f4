/**
 * What an operator does to an account, each through the `/d1` function with the flows' own
 * rules, each written to the audit log: grant or withdraw administration (never leaving the
 * site without an administrator), sign out everywhere, resend the signup code, delete (after a
 * confirmation page; never one's own account).
 *
 * @module
 */
import { h } from "preact";
import {
  adminRemoveUser,
  getUser,
  resendVerification,
  setAdmin,
  signOutEverywhere,
  type User,
} from "../../d1.ts";
import type { ConsoleRequest, ScreenRoute } from "./context.ts";
import { Card, PostForm } from "./ui.ts";

function at(req: ConsoleRequest, id: string): string {
  return `${req.services.base}/users/${encodeURIComponent(id)}`;
}

function back(req: ConsoleRequest, id: string, key: "done" | "error", code: string): Response {
  return req.c.redirect(`${at(req, id)}?${key}=${encodeURIComponent(code)}`, 303);
}

const view = (u: User) => ({ email: u.email, name: u.name, isAdmin: u.isAdmin });

async function toggleAdmin(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const f = await req.form();
  if (f.admin !== "1" && f.admin !== "0") return back(req, id, "error", "invalid_input");
  const admin = f.admin === "1";
  const r = await setAdmin(req.services.db, { userId: id, admin });
  if (!r.ok) return back(req, id, "error", r.error);
  if (!r.changed) return back(req, id, "done", "unchanged");
  await req.audit({
    action: admin ? "user.promote" : "user.demote",
    target: `user:${id}`,
    before: { ...view(r.user), isAdmin: !admin },
    after: view(r.user),
  });
  return back(req, id, "done", admin ? "promoted" : "demoted");
}

async function signOut(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const found = await getUser(req.services.db, id);
  const r = await signOutEverywhere(req.services.db, { userId: id });
  if (!r.ok || !found.ok) return back(req, id, "error", r.ok ? "not_found" : r.error);
  await req.audit({
    action: "user.sign_out_everywhere",
    target: `user:${id}`,
    before: view(found.user),
  });
  // Your own account: this console session ended too.
  if (id === req.op.user.id) return req.c.redirect(`${req.services.base}/login?signed_out=1`, 303);
  return back(req, id, "done", "signed_out");
}

async function resend(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const { db, tokenSecret, sendEmail, appName } = req.services;
  const r = await resendVerification(db, { userId: id, secret: tokenSecret, sendEmail, appName });
  if (!r.ok) return back(req, id, "error", r.error);
  await req.audit({ action: "user.resend_verification", target: `user:${id}`, after: r.email });
  return back(req, id, "done", "resent");
}

async function confirmDelete(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const found = await getUser(req.services.db, id);
  if (!found.ok) return back(req, id, "error", found.error);
  if (id === req.op.user.id) return back(req, id, "error", "self_delete");
  const u = found.user;
  return req.page({
    title: `Delete ${u.email}?`,
    body: h(
      Card,
      { class: "danger-zone" },
      h(
        "p",
        null,
        "The account, its linked sign-ins and any pending codes are deleted at once, every ",
        "session of it ends, and ",
        h("strong", null, u.email),
        " gets an e-mail saying so. This cannot be undone.",
      ),
      h(
        "div",
        { class: "actions" },
        h(PostForm, {
          action: `${at(req, id)}/delete`,
          csrf: req.csrf,
          label: "Delete this account",
          variant: "danger",
        }),
        h("a", { class: "button secondary", href: at(req, id) }, "Keep it"),
      ),
    ),
  });
}

async function remove(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  if (id === req.op.user.id) return back(req, id, "error", "self_delete");
  const { db, sendEmail, appName, base } = req.services;
  const r = await adminRemoveUser(db, { userId: id, sendEmail, appName });
  if (!r.ok) return back(req, id, "error", r.error);
  await req.audit({ action: "user.delete", target: `user:${id}`, before: view(r.user) });
  return req.page({
    title: "Account deleted",
    notice: `The account of ${r.user.email} was deleted.`,
    body: [
      h(
        "p",
        { key: "n" },
        r.notified
          ? "They were sent an e-mail saying so."
          : "The e-mail telling them could not be sent; the account is deleted all the same.",
      ),
      h("p", { key: "b" }, h("a", { href: `${base}/users` }, "Back to the users")),
    ],
  });
}

/** The action routes of the users screen. */
export const userActionRoutes: ScreenRoute[] = [
  { method: "POST", path: "/:id/admin", handle: toggleAdmin },
  { method: "POST", path: "/:id/sign-out", handle: signOut },
  { method: "POST", path: "/:id/resend", handle: resend },
  { method: "GET", path: "/:id/delete", handle: confirmDelete },
  { method: "POST", path: "/:id/delete", handle: remove },
];
