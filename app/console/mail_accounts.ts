/**
 * The mail accounts screen: the mail API's accounts (newest first, 20 a page), a new account,
 * and one account with its users and addresses: add a user, add an address, close or reopen
 * it, switch its developer API access. Everything goes through the mailroom API.
 *
 * @module
 */
import { h } from "preact";
import type { AccountDetail } from "../../mail.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { call, MailNav, MailTime } from "./mail_common.ts";
import { Badge, Card, Facts, Field, PostForm, Table } from "./ui.ts";

const DONE: Record<string, string> = {
  created: "The account was created.",
  user: "The user was added.",
  address: "The address was added.",
  updated: "The account was changed.",
};

async function list(req: ConsoleRequest, problem?: string): Promise<Response> {
  const { mail, base } = req.services;
  const page = Math.max(1, Number(req.c.req.query("page")) || 1);
  const accounts = await call(() => mail.listAccounts({ page }));
  const pages = accounts.ok
    ? Math.max(1, Math.ceil(accounts.value.total / accounts.value.per_page))
    : 1;
  return req.page({
    title: "Mail API accounts",
    lead: "Accounts of the mail-scanning API, newest first.",
    status: problem ? 400 : 200,
    error: problem ?? (accounts.ok ? undefined : accounts.message),
    body: [
      accounts.ok
        ? h(Table, {
          key: "t",
          caption: `Accounts, page ${page} of ${pages}`,
          head: ["Account", "Status", "API access", "Created"],
          rows: accounts.value.data.map((a) => [
            h("a", { href: `${base}/mail/accounts/${a.account_id}` }, a.name),
            h("span", { class: "actions" }, [
              h(Badge, {
                key: "s",
                tone: a.status === "open" ? "ok" : "bad",
                text: a.status === "open" ? "Open" : "Closed",
              }),
              a.sandbox ? h(Badge, { key: "x", tone: "info", text: "Sandbox" }) : null,
            ]),
            a.api_access ? "On" : "Off",
            h(MailTime, { at: a.created_at }),
          ]),
          empty: "No account yet.",
        })
        : null,
      pages > 1
        ? h(
          "nav",
          { key: "p", class: "pager", "aria-label": "Pages of accounts" },
          page > 1
            ? h(
              "a",
              { class: "button secondary", href: `${base}/mail?page=${page - 1}` },
              "Newer accounts",
            )
            : null,
          page < pages
            ? h(
              "a",
              { class: "button secondary", href: `${base}/mail?page=${page + 1}` },
              "Older accounts",
            )
            : null,
        )
        : null,
      h(
        Card,
        { key: "new", title: "Create an account" },
        h(
          PostForm,
          { action: `${base}/mail`, csrf: req.csrf, label: "Create the account", layout: "stack" },
          h(Field, { label: "Name", name: "name", required: true, attrs: { maxLength: 200 } }),
          h(
            "label",
            { class: "check" },
            h("input", { type: "checkbox", name: "api_access", value: "1", checked: true }),
            "Developer API access",
          ),
          h(
            "label",
            { class: "check" },
            h("input", { type: "checkbox", name: "sandbox", value: "1" }),
            "Sandbox account (test keys, test items)",
          ),
        ),
      ),
    ],
  });
}

async function create(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const name = (f.name ?? "").trim();
  if (!name || name.length > 200) return await list(req, "The name has 1 to 200 characters.");
  const input = { name, api_access: f.api_access === "1", sandbox: f.sandbox === "1" };
  const r = await call(() => req.services.mail.createAccount(input));
  if (!r.ok) return await list(req, r.message);
  await req.audit({
    action: "mail.account.create",
    target: `mail-account:${r.value.account_id}`,
    after: input,
  });
  return req.c.redirect(
    `${req.services.base}/mail/accounts/${r.value.account_id}?done=created`,
    303,
  );
}

function detailPage(req: ConsoleRequest, a: AccountDetail, problem?: string): Response {
  const { base } = req.services;
  const at = `${base}/mail/accounts/${a.account_id}`;
  const done = req.c.req.query("done");
  return req.page({
    title: a.name,
    status: problem ? 400 : 200,
    notice: done ? DONE[done] : undefined,
    error: problem,
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "Account" }),
      h(
        Card,
        { key: "facts", title: "Account" },
        h(Facts, {
          items: [
            ["Status", a.status === "open" ? "Open" : "Closed"],
            ["Developer API access", a.api_access ? "On" : "Off"],
            ["Sandbox", a.sandbox ? "Yes" : "No"],
            ["Created", h(MailTime, { at: a.created_at })],
            ["Id", h("code", null, a.account_id)],
          ],
        }),
        h(
          "div",
          { class: "actions" },
          h(PostForm, {
            action: `${at}/update`,
            csrf: req.csrf,
            hidden: { status: a.status === "open" ? "closed" : "open" },
            label: a.status === "open" ? "Close the account" : "Reopen the account",
            variant: a.status === "open" ? "danger" : "primary",
          }),
          h(PostForm, {
            action: `${at}/update`,
            csrf: req.csrf,
            hidden: { api_access: a.api_access ? "0" : "1" },
            label: a.api_access ? "Switch API access off" : "Switch API access on",
            variant: "secondary",
          }),
        ),
      ),
      h(
        Card,
        { key: "users", title: "Users and addresses" },
        h(Table, {
          caption: "Addresses",
          head: ["Address", "User", "Created"],
          rows: a.addresses.map((ad) => [
            `${ad.label} (${ad.address_id})`,
            a.users.find((u) => u.user_id === ad.user_id)?.full_name ?? ad.user_id,
            h(MailTime, { at: ad.created_at }),
          ]),
          empty: "No address yet: add a user, then an address for them.",
        }),
        h(
          PostForm,
          { action: `${at}/users`, csrf: req.csrf, label: "Add the user", layout: "stack" },
          h(Field, {
            label: "Full name of a new user",
            name: "full_name",
            required: true,
            attrs: { maxLength: 200 },
          }),
        ),
        a.users.length
          ? h(
            PostForm,
            {
              action: `${at}/addresses`,
              csrf: req.csrf,
              label: "Add the address",
              layout: "stack",
            },
            h(
              "div",
              { class: "field" },
              h("label", { for: "address-user" }, "User of the new address"),
              h(
                "select",
                { id: "address-user", name: "user_id" },
                a.users.map((u) => h("option", { key: u.user_id, value: u.user_id }, u.full_name)),
              ),
            ),
            h(Field, {
              label: "Label",
              name: "label",
              value: "Mailbox",
              attrs: { maxLength: 200 },
            }),
          )
          : null,
      ),
    ],
  });
}

async function detail(req: ConsoleRequest, problem?: string): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const found = await call(() => req.services.mail.getAccount(id));
  if (!found.ok) {
    return req.page({
      title: "Account not found",
      status: 404,
      error: found.message,
      body: h("p", null, h("a", { href: `${req.services.base}/mail` }, "Back to the accounts")),
    });
  }
  return detailPage(req, found.value, problem);
}

function change(kind: "users" | "addresses" | "update") {
  return async (req: ConsoleRequest): Promise<Response> => {
    const id = req.c.req.param("id") ?? "";
    const f = await req.form();
    const { mail, base } = req.services;
    const before = await call(() => mail.getAccount(id));
    if (!before.ok) return await detail(req);
    let done: string;
    if (kind === "users") {
      const r = await call(() => mail.createUser(id, (f.full_name ?? "").trim()));
      if (!r.ok) return await detail(req, r.message);
      await req.audit({
        action: "mail.user.create",
        target: `mail-account:${id}`,
        after: { user_id: r.value.user_id, full_name: f.full_name },
      });
      done = "user";
    } else if (kind === "addresses") {
      const r = await call(() =>
        mail.createAddress(id, f.user_id ?? "", (f.label ?? "").trim() || undefined)
      );
      if (!r.ok) return await detail(req, r.message);
      await req.audit({
        action: "mail.address.create",
        target: `mail-account:${id}`,
        after: { address_id: r.value.address_id, user_id: f.user_id, label: f.label },
      });
      done = "address";
    } else {
      const wanted = {
        status: f.status === "open" || f.status === "closed" ? f.status : undefined,
        api_access: f.api_access === "1" ? true : f.api_access === "0" ? false : undefined,
      } as const;
      if (wanted.status === undefined && wanted.api_access === undefined) {
        return await detail(req, "Nothing to change was given.");
      }
      const r = await call(() => mail.updateAccount(id, wanted));
      if (!r.ok) return await detail(req, r.message);
      await req.audit({
        action: "mail.account.update",
        target: `mail-account:${id}`,
        before: { status: before.value.status, api_access: before.value.api_access },
        after: {
          status: wanted.status ?? before.value.status,
          api_access: wanted.api_access ?? before.value.api_access,
        },
      });
      done = "updated";
    }
    return req.c.redirect(`${base}/mail/accounts/${id}?done=${done}`, 303);
  };
}

/** The mail accounts screen. */
export const mailAccountsScreen: Screen = {
  id: "mail",
  path: "/mail",
  title: "Mail API",
  group: "Mail API",
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => list(req) },
    { method: "POST", path: "/", handle: create },
    { method: "GET", path: "/accounts/:id", handle: (req) => detail(req) },
    { method: "POST", path: "/accounts/:id/users", handle: change("users") },
    { method: "POST", path: "/accounts/:id/addresses", handle: change("addresses") },
    { method: "POST", path: "/accounts/:id/update", handle: change("update") },
  ],
};
