/**
 * The users screen: every account of the `/d1` tables, in e-mail order, searched by the start
 * of the e-mail or the name, a page at a time (keyset cursors: page 1,000 costs what page 1
 * does); one account's details and what an operator may do to it (`users_actions.ts`).
 *
 * @module
 */
import { h } from "preact";
import { getUser, listUsers, type User } from "../../d1.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { Badge, Card, Facts, PostForm, Table, When } from "./ui.ts";
import { userActionRoutes } from "./users_actions.ts";
import { signInActionRoutes, signInCards } from "./user_events.ts";

/** Users per page. */
export const USERS_PAGE_SIZE = 50;

const DONE: Record<string, string> = {
  promoted: "They are now an administrator.",
  demoted: "They are no longer an administrator.",
  unchanged: "Nothing needed to change.",
  signed_out: "Every session of this account has ended: their next request is signed out.",
  resent: "A new signup code is on its way to them.",
  factor_reset: "Their authenticator app was removed: they sign in with the password alone.",
};

/** Sentences for the errors of the users screen's actions. */
export const USER_ERRORS: Record<string, string> = {
  last_admin: "This is the last administrator: make someone else an administrator first.",
  not_found: "That account no longer exists.",
  already_verified: "This address is verified already: there is no code to send.",
  expired_code: "No signup is pending for this address any more: they need to sign up again.",
  too_many_attempts: "A code was sent less than a minute ago. Try again in a minute.",
  self_delete: "You cannot delete your own account here: use your account page.",
  invalid_input: "That request was not complete.",
};

function badges(u: User) {
  return [
    u.isAdmin ? h(Badge, { tone: "info", key: "a", text: "Administrator" }) : null,
    u.emailVerified
      ? h(Badge, { tone: "ok", key: "v", text: "Verified" })
      : h(Badge, { tone: "warn", key: "v", text: "Not verified" }),
  ];
}

async function list(req: ConsoleRequest): Promise<Response> {
  const { c, services } = req;
  const base = `${services.base}/users`;
  const search = (c.req.query("search") ?? "").slice(0, 254);
  const admins = c.req.query("admins") === "1";
  const after = c.req.query("after") || undefined;
  const before = c.req.query("before") || undefined;
  let page = await listUsers(services.db, {
    search,
    after,
    before: after ? undefined : before,
    limit: USERS_PAGE_SIZE,
    adminsOnly: admins,
  });
  // A cursor from an old link that no longer parses: start from the first page.
  if (!page.ok && page.error === "invalid_input") {
    page = await listUsers(services.db, { search, limit: USERS_PAGE_SIZE, adminsOnly: admins });
  }
  const keep = (extra: Record<string, string>) => {
    const q = new URLSearchParams();
    if (search) q.set("search", search);
    if (admins) q.set("admins", "1");
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return `${base}?${q}`;
  };
  const summary = !page.ok
    ? "The users could not be read just now. Try again in a moment."
    : search
    ? `${page.total} ${page.total === 1 ? "account matches" : "accounts match"} “${search}”.`
    : `${page.total} ${page.total === 1 ? "account" : "accounts"}${
      admins ? " with administration" : ""
    }.`;
  const results = h(
    "div",
    { id: "results" },
    h("p", { role: "status" }, summary),
    page.ok
      ? h(Table, {
        caption: search ? `Accounts whose e-mail or name starts with “${search}”` : "Accounts",
        head: ["E-mail", "Name", "Status", "Created"],
        rows: page.users.map((u) => [
          h("a", { href: `${base}/${encodeURIComponent(u.id)}` }, u.email),
          u.name ?? h("span", { class: "muted" }, "—"),
          h("span", { class: "actions" }, badges(u)),
          h(When, { ms: u.createdAt }),
        ]),
        empty: search
          ? "Nobody matches. Try the first letters of an e-mail or a name."
          : "No accounts yet.",
      })
      : null,
    page.ok && (page.previous || page.next)
      ? h(
        "nav",
        { class: "pager", "aria-label": "Pages of accounts" },
        page.previous
          ? h(
            "a",
            { class: "button secondary", href: keep({ before: page.previous }) },
            "Previous page",
          )
          : null,
        page.next
          ? h("a", { class: "button secondary", href: keep({ after: page.next }) }, "Next page")
          : null,
      )
      : null,
  );
  return req.page({
    title: "Users",
    lead: "Search by the first letters of an e-mail address or a name.",
    body: [
      h(
        "form",
        {
          key: "search",
          method: "get",
          action: base,
          class: "inline",
          role: "search",
          "data-search": "results",
        },
        h(
          "div",
          { class: "field" },
          h("label", { for: "user-search" }, "Find an account"),
          h("input", {
            id: "user-search",
            type: "search",
            name: "search",
            value: search,
            maxLength: 254,
            autocomplete: "off",
          }),
        ),
        h(
          "label",
          { class: "check" },
          h("input", { type: "checkbox", name: "admins", value: "1", checked: admins }),
          "Administrators only",
        ),
        h("button", { type: "submit" }, "Search"),
      ),
      h("div", { key: "results" }, results),
    ],
  });
}

async function detail(req: ConsoleRequest): Promise<Response> {
  const { c, services, csrf } = req;
  const id = c.req.param("id") ?? "";
  const found = await getUser(services.db, id);
  const base = `${services.base}/users`;
  if (!found.ok) {
    return req.page({
      title: "Account not found",
      status: 404,
      error: found.error === "not_found"
        ? "There is no account with this id: it may have been deleted."
        : "The account could not be read just now.",
      body: h("p", null, h("a", { href: base }, "Back to the users")),
    });
  }
  const u = found.user;
  const self = u.id === req.op.user.id;
  const at = `${base}/${encodeURIComponent(u.id)}`;
  const done = c.req.query("done");
  const error = c.req.query("error");
  const signIn = await signInCards(req, u.id, at);
  return req.page({
    title: u.email,
    notice: done ? DONE[done] : undefined,
    error: error ? USER_ERRORS[error] ?? "That did not work. Try again." : undefined,
    body: [
      h(
        Card,
        { key: "facts", title: "Account" },
        h(Facts, {
          items: [
            ["E-mail", u.email],
            ["Name", u.name ?? "—"],
            ["Status", h("span", { class: "actions" }, badges(u))],
            ["Password", u.hasPassword ? "Set" : "None (signs in with a provider)"],
            ["Created", h(When, { ms: u.createdAt })],
            ["Id", h("code", null, u.id)],
          ],
        }),
      ),
      h(
        Card,
        { key: "rights", title: "Administration" },
        h(
          "p",
          null,
          u.isAdmin
            ? "Administrators may use this console."
            : "Make this person an administrator to let them use this console.",
        ),
        h(PostForm, {
          action: `${at}/admin`,
          csrf,
          hidden: { admin: u.isAdmin ? "0" : "1" },
          label: u.isAdmin
            ? (self ? "Stop being an administrator" : "Remove administration")
            : "Make administrator",
          variant: u.isAdmin ? "secondary" : "primary",
        }),
      ),
      h(
        Card,
        { key: "sessions", title: "Sessions" },
        h("p", null, "Ends every session of this account on every device; they sign in again."),
        h(PostForm, {
          action: `${at}/sign-out`,
          csrf,
          label: "Sign out everywhere",
          variant: "secondary",
        }),
      ),
      ...signIn,
      u.emailVerified ? null : h(
        Card,
        { key: "verify", title: "Verification" },
        h(
          "p",
          null,
          "Sends a fresh signup code. It works only in the browser they signed up with: you " +
            "cannot verify an address for them.",
        ),
        h(PostForm, {
          action: `${at}/resend`,
          csrf,
          label: "Resend the signup code",
          variant: "secondary",
        }),
      ),
      h(
        Card,
        { key: "danger", title: "Delete", class: "danger-zone" },
        self ? h("p", null, "This is your own account: delete it from your account page.") : [
          h("p", { key: "p" }, "Deletes the account and its linked sign-ins; they get a notice."),
          h(
            "a",
            { key: "a", class: "button danger", href: `${at}/delete` },
            "Delete this account…",
          ),
        ],
      ),
      h("p", { key: "back" }, h("a", { href: base }, "Back to the users")),
    ],
  });
}

/** The users screen. */
export const usersScreen: Screen = {
  id: "users",
  path: "/users",
  title: "Users",
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: list },
    { method: "GET", path: "/:id", handle: detail },
    ...userActionRoutes,
    ...signInActionRoutes,
  ],
};
