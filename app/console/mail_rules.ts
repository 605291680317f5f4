/**
 * The mail rules screen: an account's system rules (Auto Scan, Auto Shred, Auto Discard) per
 * user, and turning each on or off for every user of the account, as the account's own
 * `PUT update-system-user-defined-rule` does (a change raises `rule.changed`).
 *
 * @module
 */
import { h } from "preact";
import { type AccountDetail, AUTOMATION_NAMES, type AutomationName } from "../../mail.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { call, MailNav, MailTime, withAccount } from "./mail_common.ts";
import { Badge, Card, PostForm, Table } from "./ui.ts";

const SCREEN = { path: "/mail/rules", title: "Mail rules" };

const NAMES: Record<AutomationName, string> = {
  auto_scan: "Auto Scan",
  auto_shred: "Auto Shred",
  auto_discard: "Auto Discard",
};

async function page(req: ConsoleRequest, a: AccountDetail, error?: string): Promise<Response> {
  const { mail, base } = req.services;
  const n = Math.max(1, Number(req.c.req.query("page")) || 1);
  const rules = await call(() =>
    mail.listAccountRules(a.account_id, { page: n, sort_order: "asc" })
  );
  const done = req.c.req.query("done");
  const changed = req.c.req.query("changed");
  const flag = (on: boolean) =>
    on ? h(Badge, { tone: "ok", text: "On" }) : h(Badge, { text: "Off" });
  return req.page({
    title: `Rules of ${a.name}`,
    status: error ? 400 : 200,
    notice: done && done in NAMES
      ? `${NAMES[done as AutomationName]} changed for ${changed ?? "0"} ${
        changed === "1" ? "user" : "users"
      }.`
      : undefined,
    error: error ?? (rules.ok ? undefined : rules.message),
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "Rules" }),
      h(
        Card,
        { key: "toggles", title: "For every user of the account" },
        h(
          "p",
          null,
          "Turning a rule on or off changes it for every user of the account and tells the account's webhooks (rule.changed).",
        ),
        AUTOMATION_NAMES.map((name) =>
          h(
            "div",
            { key: name, class: "actions" },
            h("span", { class: "label" }, NAMES[name]),
            h(PostForm, {
              action: `${base}/mail/rules`,
              csrf: req.csrf,
              hidden: { account: a.account_id, automation_name: name, is_active: "1" },
              label: "Turn on",
              buttonLabel: `Turn on ${NAMES[name]} for every user`,
              variant: "secondary",
            }),
            h(PostForm, {
              action: `${base}/mail/rules`,
              csrf: req.csrf,
              hidden: { account: a.account_id, automation_name: name, is_active: "0" },
              label: "Turn off",
              buttonLabel: `Turn off ${NAMES[name]} for every user`,
              variant: "secondary",
            }),
          )
        ),
      ),
      rules.ok
        ? h(Table, {
          key: "t",
          caption: "Rules per user",
          head: ["User", "Auto Scan", "Auto Shred", "Auto Discard", "Last changed"],
          rows: rules.value.data.map((r) => [
            r.user_full_name,
            flag(r.auto_scan),
            flag(r.auto_shred),
            flag(r.auto_discard),
            h(MailTime, { at: r.last_changed_at }),
          ]),
          empty: "This account has no user yet.",
        })
        : null,
      rules.ok && rules.value.total > rules.value.per_page
        ? h(
          "nav",
          { key: "p", class: "pager", "aria-label": "Pages of users" },
          n > 1
            ? h("a", {
              class: "button secondary",
              href: `${base}/mail/rules?account=${a.account_id}&page=${n - 1}`,
            }, "Previous users")
            : null,
          n * rules.value.per_page < rules.value.total
            ? h("a", {
              class: "button secondary",
              href: `${base}/mail/rules?account=${a.account_id}&page=${n + 1}`,
            }, "More users")
            : null,
        )
        : null,
    ],
  });
}

async function toggle(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const { mail, base } = req.services;
  const account = await call(() => mail.getAccount(f.account ?? ""));
  if (!account.ok) return await withAccount(req, SCREEN, (a) => page(req, a));
  const name = f.automation_name as AutomationName;
  if (!AUTOMATION_NAMES.includes(name) || (f.is_active !== "1" && f.is_active !== "0")) {
    return await page(req, account.value, "Choose a rule and whether to turn it on or off.");
  }
  const on = f.is_active === "1";
  const r = await call(() => mail.setAccountRule(account.value.account_id, name, on));
  if (!r.ok) return await page(req, account.value, r.message);
  await req.audit({
    action: "mail.rule.set",
    target: `mail-account:${account.value.account_id}`,
    before: { automation_name: name },
    after: { automation_name: name, is_active: on ? 1 : 0, users_changed: r.value.users_changed },
  });
  return req.c.redirect(
    `${base}/mail/rules?account=${account.value.account_id}&done=${name}&changed=${r.value.users_changed}`,
    303,
  );
}

/** The mail rules screen. */
export const mailRulesScreen: Screen = {
  id: "mail-rules",
  path: SCREEN.path,
  title: SCREEN.title,
  group: "Mail API",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => withAccount(req, SCREEN, (a) => page(req, a)) },
    { method: "POST", path: "/", handle: toggle },
  ],
};
