/**
 * What the mail screens share: calling the mailroom API with its refusals turned into
 * sentences (the API's own messages already say what to do), its times as dates, the account
 * a screen is about (`?account=`), and the links between the mail screens of one account.
 *
 * @module
 */
import { h } from "preact";
import { type AccountDetail, MailApiError } from "../../mail.ts";
import type { ConsoleRequest } from "./context.ts";
import { Table, When } from "./ui.ts";

/** A mailroom call's result: its value, or what went wrong in words. */
export type Called<T> = { ok: true; value: T } | { ok: false; message: string; status: number };

/** Runs a mailroom call; a refusal becomes its message, anything else a sentence. */
export async function call<T>(run: () => Promise<T>): Promise<Called<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    if (e instanceof MailApiError) {
      return {
        ok: false,
        status: e.status,
        message: e.message || `The mail API answered ${e.status}.`,
      };
    }
    console.error("console: mail API call failed:", e);
    return {
      ok: false,
      status: 500,
      message: "The mail API could not be reached just now. Try again in a moment.",
    };
  }
}

/** A mail API time (`YYYY-MM-DD HH:MM:SS`, UTC) as a date in words. */
export function MailTime(p: { at: string | null }) {
  if (!p.at) return h("span", { class: "muted" }, "—");
  const ms = Date.parse(p.at.replace(" ", "T") + "Z");
  return Number.isFinite(ms) ? h(When, { ms }) : h("span", null, p.at);
}

/** The `?account=` id, when it looks like one. */
export function accountParam(req: ConsoleRequest): string | null {
  const v = req.c.req.query("account") ?? "";
  return /^[1-9][0-9]{0,17}$/.test(v) ? v : null;
}

/** Links to the mail screens of one account (the current one marked). */
export function MailNav(p: { base: string; account: string; current: string }) {
  const links: [string, string][] = [
    [`/mail/accounts/${p.account}`, "Account"],
    [`/mail/keys?account=${p.account}`, "API keys"],
    [`/mail/rules?account=${p.account}`, "Rules"],
    [`/mail/webhooks?account=${p.account}`, "Webhooks"],
    [`/mail/items?account=${p.account}`, "Items"],
  ];
  return h(
    "nav",
    { class: "actions", "aria-label": "This account's mail screens" },
    links.map(([href, title]) =>
      h("a", {
        key: href,
        href: p.base + href,
        class: title === p.current ? "button" : "button secondary",
        "aria-current": title === p.current ? "page" : undefined,
      }, title)
    ),
  );
}

/** The account a screen is about, or the page that asks which one. */
export async function withAccount(
  req: ConsoleRequest,
  screen: { path: string; title: string },
  show: (account: AccountDetail) => Promise<Response> | Response,
): Promise<Response> {
  const id = accountParam(req);
  const { mail, base } = req.services;
  if (id) {
    const found = await call(() => mail.getAccount(id));
    if (found.ok) return await show(found.value);
    return req.page({
      title: screen.title,
      status: found.status === 422 ? 404 : 502,
      error: found.message,
      body: h("p", null, h("a", { href: `${base}/mail` }, "Back to the accounts")),
    });
  }
  const page = Math.max(1, Number(req.c.req.query("page")) || 1);
  const accounts = await call(() => mail.listAccounts({ page }));
  return req.page({
    title: screen.title,
    lead: "Choose an account.",
    error: accounts.ok ? undefined : accounts.message,
    body: accounts.ok
      ? h(Table, {
        caption: "Accounts",
        head: ["Account", "Status", "Created"],
        rows: accounts.value.data.map((a) => [
          h("a", { href: `${base}${screen.path}?account=${a.account_id}` }, a.name),
          a.status === "open" ? "Open" : "Closed",
          h(MailTime, { at: a.created_at }),
        ]),
        empty: "There is no account yet: create one on the accounts page.",
      })
      : null,
  });
}
