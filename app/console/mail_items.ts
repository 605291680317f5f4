/**
 * The mail items screen: an account's items (newest first, 20 a page) with their state and
 * history, and the mailroom's actions on a pending request: complete it (open and rescan need
 * the scan PDF) or fail it with a reason (the item returns to the state before).
 *
 * @module
 */
import { h } from "preact";
import type { AccountDetail, MailItem } from "../../mail.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { call, MailNav, MailTime, withAccount } from "./mail_common.ts";
import { Badge, Field, PostForm, Table } from "./ui.ts";

const SCREEN = { path: "/mail/items", title: "Mail items" };

const STATES: Record<string, string> = {
  received: "Received",
  open_requested: "Open requested",
  opened: "Opened",
  rescan_requested: "Rescan requested",
  shred_requested: "Shred requested",
  shredded: "Shredded",
  discard_requested: "Discard requested",
  discarded: "Discarded",
};

const needsScan = (status: string) => status === "open_requested" || status === "rescan_requested";

/** How many changes an item's history holds, in words: "1 change", "3 changes". */
export function changesInWords(n: number): string {
  return `${n} ${n === 1 ? "change" : "changes"}`;
}

function actions(req: ConsoleRequest, a: AccountDetail, item: MailItem) {
  if (!item.current_status.endsWith("_requested")) {
    return h("span", { class: "muted" }, "Nothing pending");
  }
  const at = `${req.services.base}/mail/items/${item.mail_id}`;
  return h(
    "div",
    { class: "stack-sm" },
    h(
      PostForm,
      {
        action: `${at}/complete`,
        csrf: req.csrf,
        hidden: { account: a.account_id },
        label: "Complete",
        buttonLabel: `Complete the request on item ${item.mail_id}`,
        enctype: "multipart/form-data",
      },
      needsScan(item.current_status)
        ? h(Field, {
          label: "Scan (PDF)",
          name: "scan",
          type: "file",
          idPrefix: `scan-${item.mail_id}`,
          required: true,
          attrs: { accept: "application/pdf" },
        })
        : null,
    ),
    h(
      PostForm,
      {
        action: `${at}/fail`,
        csrf: req.csrf,
        hidden: { account: a.account_id },
        label: "Fail",
        buttonLabel: `Fail the request on item ${item.mail_id}`,
        variant: "secondary",
      },
      h(Field, {
        label: "Reason",
        name: "reason",
        idPrefix: `reason-${item.mail_id}`,
        required: true,
        attrs: { maxLength: 500 },
      }),
    ),
  );
}

async function page(req: ConsoleRequest, a: AccountDetail, error?: string): Promise<Response> {
  const { mail, base } = req.services;
  const n = Math.max(1, Number(req.c.req.query("page")) || 1);
  const items = await call(() => mail.listAccountItems(a.account_id, { page: n }));
  const done = req.c.req.query("done");
  const pages = items.ok ? Math.max(1, Math.ceil(items.value.total / items.value.per_page)) : 1;
  return req.page({
    title: `Items of ${a.name}`,
    status: error ? 400 : 200,
    notice: done === "completed"
      ? "The request was completed."
      : done === "failed"
      ? "The request was failed: the item is back in the state before."
      : undefined,
    error: error ?? (items.ok ? undefined : items.message),
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "Items" }),
      items.ok
        ? h(Table, {
          key: "t",
          caption: `Items, newest first, page ${n} of ${pages}`,
          head: ["Item", "From", "State", "Received", "History", "Mailroom"],
          rows: items.value.data.map((i) => [
            `${i.mail_id} (${i.item_type})`,
            i.sender_name,
            h(Badge, {
              tone: i.current_status.endsWith("_requested") ? "warn" : "info",
              text: STATES[i.current_status] ?? i.current_status,
            }),
            h(MailTime, { at: i.received_at }),
            h(
              "details",
              null,
              h(
                "summary",
                null,
                changesInWords(i.status_history.length),
              ),
              h(
                "ol",
                null,
                i.status_history.map((s, k) =>
                  h(
                    "li",
                    { key: k },
                    `${STATES[s.status] ?? s.status} (${s.source}${s.note ? `: ${s.note}` : ""}) `,
                    h(MailTime, { at: s.changed_at }),
                  )
                ),
              ),
            ),
            actions(req, a, i),
          ]),
          empty: "This account has received nothing yet.",
        })
        : null,
      pages > 1
        ? h(
          "nav",
          { key: "p", class: "pager", "aria-label": "Pages of items" },
          n > 1
            ? h("a", {
              class: "button secondary",
              href: `${base}/mail/items?account=${a.account_id}&page=${n - 1}`,
            }, "Newer items")
            : null,
          n < pages
            ? h("a", {
              class: "button secondary",
              href: `${base}/mail/items?account=${a.account_id}&page=${n + 1}`,
            }, "Older items")
            : null,
        )
        : null,
    ],
  });
}

function act(kind: "complete" | "fail") {
  return async (req: ConsoleRequest): Promise<Response> => {
    const id = req.c.req.param("id") ?? "";
    const f = await req.form();
    const { mail, base } = req.services;
    const account = await call(() => mail.getAccount(f.account ?? ""));
    if (!account.ok) return await withAccount(req, SCREEN, (a) => page(req, a));
    const item = await call(() => mail.getItem(id));
    const mine = item.ok &&
      account.value.addresses.some((ad) => ad.address_id === item.value.address_id);
    if (!item.ok || !mine) {
      return await page(req, account.value, "This account has no item with that id.");
    }
    const before = { status: item.value.current_status };
    let r;
    if (kind === "complete") {
      const scan = (await req.files()).scan;
      r = await call(() => mail.completeRequest(id, scan && scan.size > 0 ? { scan } : {}));
    } else {
      r = await call(() => mail.failRequest(id, (f.reason ?? "").trim()));
    }
    if (!r.ok) return await page(req, account.value, r.message);
    const after = await call(() => mail.getItem(id));
    await req.audit({
      action: `mail.item.${kind}`,
      target: `mail-item:${id}`,
      before,
      after: {
        status: after.ok ? after.value.current_status : null,
        reason: kind === "fail" ? f.reason : undefined,
      },
    });
    return req.c.redirect(
      `${base}/mail/items?account=${account.value.account_id}&done=${
        kind === "complete" ? "completed" : "failed"
      }`,
      303,
    );
  };
}

/** The mail items screen. */
export const mailItemsScreen: Screen = {
  id: "mail-items",
  path: SCREEN.path,
  title: SCREEN.title,
  group: "Mail API",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => withAccount(req, SCREEN, (a) => page(req, a)) },
    { method: "POST", path: "/:id/complete", handle: act("complete") },
    { method: "POST", path: "/:id/fail", handle: act("fail") },
  ],
};
