/**
 * The mail API keys screen: an account's keys (by prefix and label, never the key), a new key
 * (shown once: the API stores only its hash), revocation (after which the key gets 401), and
 * the lookup of a key by the prefix a customer quotes.
 *
 * @module
 */
import { h } from "preact";
import type { AccountDetail, ApiKeyRecord } from "../../mail.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { call, MailNav, MailTime, withAccount } from "./mail_common.ts";
import { Badge, Card, Field, PostForm, ShownOnce, Table } from "./ui.ts";

const SCREEN = { path: "/mail/keys", title: "Mail API keys" };

function keyRows(req: ConsoleRequest, keys: ApiKeyRecord[], account: string) {
  return keys.map((k) => [
    h("code", null, `${k.prefix}…`),
    k.label || h("span", { class: "muted" }, "—"),
    k.revoked_at
      ? h(
        "span",
        null,
        h(Badge, { tone: "bad", text: "Revoked" }),
        " ",
        h(MailTime, { at: k.revoked_at }),
      )
      : h(Badge, { tone: "ok", text: "Works" }),
    h(MailTime, { at: k.created_at }),
    k.revoked_at ? "" : h(PostForm, {
      action: `${req.services.base}/mail/keys/${k.key_id}/revoke`,
      csrf: req.csrf,
      hidden: { account },
      label: "Revoke",
      buttonLabel: `Revoke the key ${k.prefix}`,
      variant: "danger",
    }),
  ]);
}

function accountPage(
  req: ConsoleRequest,
  a: AccountDetail,
  extra?: { created?: string; error?: string },
) {
  const { base } = req.services;
  const done = req.c.req.query("done");
  return req.page({
    title: `API keys of ${a.name}`,
    status: extra?.error ? 400 : 200,
    notice: extra?.created
      ? "The key was created."
      : done === "revoked"
      ? "The key was revoked: requests with it are refused (401) from now on."
      : undefined,
    error: extra?.error,
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "API keys" }),
      extra?.created
        ? h(
          Card,
          { key: "shown" },
          h(ShownOnce, {
            id: "api-key",
            label: "The new API key",
            value: extra.created,
            hint: "It is shown only this once: the API keeps only its hash. Copy it now.",
          }),
        )
        : null,
      h(Table, {
        key: "t",
        caption: "Keys, oldest first",
        head: ["Prefix", "Label", "State", "Created", "Action"],
        rows: keyRows(req, a.api_keys, a.account_id),
        empty: "This account has no key yet.",
      }),
      h(
        Card,
        { key: "new", title: "Create a key" },
        h(
          PostForm,
          {
            action: `${base}/mail/keys`,
            csrf: req.csrf,
            hidden: { account: a.account_id },
            label: "Create the key",
            layout: "stack",
          },
          h(Field, {
            label: "Label",
            name: "label",
            hint: "What the key is for, e.g. CRM.",
            attrs: { maxLength: 200 },
          }),
        ),
      ),
      h(Card, { key: "find", title: "Find a key a customer quotes" }, lookupForm(req)),
    ],
  });
}

async function show(req: ConsoleRequest): Promise<Response> {
  const prefix = (req.c.req.query("prefix") ?? "").trim();
  if (prefix && !req.c.req.query("account")) return await find(req, prefix);
  return await withAccount(req, SCREEN, (a) => accountPage(req, a));
}

async function find(req: ConsoleRequest, prefix: string): Promise<Response> {
  const found = await call(() => req.services.mail.findApiKeys(prefix));
  return req.page({
    title: "Find an API key",
    error: found.ok ? undefined : found.message,
    body: [
      lookupForm(req),
      found.ok
        ? h(Table, {
          caption: `Keys starting with ${prefix}`,
          head: ["Prefix", "Label", "State", "Created", "Action"],
          rows: found.value.map((k) => [
            ...keyRows(req, [k], k.account_id)[0].slice(0, 4),
            h(
              "a",
              { href: `${req.services.base}/mail/keys?account=${k.account_id}` },
              "Its account",
            ),
          ]),
          empty: "No key starts with that.",
        })
        : null,
    ],
  });
}

async function create(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const account = f.account ?? "";
  const label = (f.label ?? "").trim();
  const { mail } = req.services;
  const before = await call(() => mail.getAccount(account));
  if (!before.ok) return notFound(req, before.message);
  const r = await call(() => mail.createApiKey(account, label));
  if (!r.ok) return accountPage(req, before.value, { error: r.message });
  await req.audit({
    action: "mail.key.create",
    target: `mail-key:${r.value.key_id}`,
    after: { account_id: account, label, prefix: r.value.api_key.slice(0, 12) },
  });
  const after = await call(() => mail.getAccount(account));
  return accountPage(req, after.ok ? after.value : before.value, { created: r.value.api_key });
}

async function revoke(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const f = await req.form();
  const { mail, base } = req.services;
  const account = await call(() => mail.getAccount(f.account ?? ""));
  const key = account.ok ? account.value.api_keys.find((k) => k.key_id === id) : undefined;
  if (!account.ok || !key) return notFound(req, "This account has no key with that id.");
  const r = await call(() => mail.revokeApiKey(id));
  if (!r.ok) return accountPage(req, account.value, { error: r.message });
  await req.audit({
    action: "mail.key.revoke",
    target: `mail-key:${id}`,
    before: { prefix: key.prefix, label: key.label, revoked_at: key.revoked_at },
    after: { prefix: key.prefix, label: key.label, revoked: true },
  });
  return req.c.redirect(`${base}/mail/keys?account=${account.value.account_id}&done=revoked`, 303);
}

function notFound(req: ConsoleRequest, message: string): Response {
  return req.page({
    title: "Not found",
    status: 404,
    error: message,
    body: h("p", null, h("a", { href: `${req.services.base}/mail/keys` }, "Back to the keys")),
  });
}

function lookupForm(req: ConsoleRequest) {
  return h(
    "form",
    { method: "get", action: `${req.services.base}/mail/keys`, class: "inline", role: "search" },
    h(Field, {
      label: "Find a key by its first characters",
      name: "prefix",
      attrs: { minLength: 4, maxLength: 12, autocomplete: "off" },
    }),
    h("button", { type: "submit" }, "Find"),
  );
}

/** The mail API keys screen. */
export const mailKeysScreen: Screen = {
  id: "mail-keys",
  path: SCREEN.path,
  title: SCREEN.title,
  group: "Mail API",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: show },
    { method: "POST", path: "/", handle: create },
    { method: "POST", path: "/:id/revoke", handle: revoke },
  ],
};
