/**
 * The mail webhooks screen: an account's webhook subscriptions, a new one (its signing
 * secret shown once), and a webhook's delivery log with every attempt and a button that sends
 * a past delivery's event again (a new delivery, signed afresh).
 *
 * @module
 */
import { h } from "preact";
import { type AccountDetail, MAIL_EVENT_TYPES, type MailEventType } from "../../mail.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { call, MailNav, MailTime, withAccount } from "./mail_common.ts";
import { Badge, Card, Field, PostForm, ShownOnce, Table } from "./ui.ts";

const SCREEN = { path: "/mail/webhooks", title: "Mail webhooks" };

function list(
  req: ConsoleRequest,
  a: AccountDetail,
  extra: { secret?: string; error?: string } = {},
) {
  const { base } = req.services;
  return req.page({
    title: `Webhooks of ${a.name}`,
    status: extra.error ? 400 : 200,
    notice: extra.secret ? "The webhook was registered." : undefined,
    error: extra.error,
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "Webhooks" }),
      extra.secret
        ? h(
          Card,
          { key: "s" },
          h(ShownOnce, {
            id: "webhook-secret",
            label: "The webhook's signing secret",
            value: extra.secret,
            hint:
              "It is shown only this once: the receiver checks every delivery's signature with it.",
          }),
        )
        : null,
      h(Table, {
        key: "t",
        caption: "Webhooks",
        head: ["Where", "Events", "State", "Created", "Deliveries"],
        rows: a.webhooks.map((w) => [
          h("code", null, w.url),
          w.events.join(", "),
          w.active ? h(Badge, { tone: "ok", text: "Active" }) : h(Badge, { text: "Inactive" }),
          h(MailTime, { at: w.created_at }),
          h(
            "a",
            { href: `${base}/mail/webhooks/${w.webhook_id}?account=${a.account_id}` },
            "Delivery log",
          ),
        ]),
        empty: "This account has no webhook yet.",
      }),
      h(
        Card,
        { key: "new", title: "Register a webhook" },
        h(
          PostForm,
          {
            action: `${base}/mail/webhooks`,
            csrf: req.csrf,
            hidden: { account: a.account_id },
            label: "Register the webhook",
            layout: "stack",
          },
          h(Field, {
            label: "URL",
            name: "url",
            type: "url",
            required: true,
            hint: "An absolute http(s) URL that receives signed POSTs. Internal addresses " +
              "(loopback, private, link-local, metadata) are refused unless MAIL_WEBHOOK_ALLOW " +
              "names them.",
            attrs: { maxLength: 2000 },
          }),
          h(
            "fieldset",
            null,
            h("legend", { class: "label" }, "Events"),
            MAIL_EVENT_TYPES.map((e) =>
              h(
                "label",
                { key: e, class: "check" },
                h("input", { type: "checkbox", name: `event_${e}`, value: "1", checked: true }),
                e,
              )
            ),
          ),
        ),
      ),
    ],
  });
}

async function register(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const { mail } = req.services;
  const account = await call(() => mail.getAccount(f.account ?? ""));
  if (!account.ok) return await withAccount(req, SCREEN, (a) => list(req, a));
  const events = MAIL_EVENT_TYPES.filter((e) => f[`event_${e}`] === "1") as MailEventType[];
  if (events.length === 0) return list(req, account.value, { error: "Choose at least one event." });
  const url = (f.url ?? "").trim();
  const r = await call(() => mail.registerWebhook(account.value.account_id, url, events));
  if (!r.ok) return list(req, account.value, { error: r.message });
  await req.audit({
    action: "mail.webhook.register",
    target: `mail-webhook:${r.value.webhook_id}`,
    after: { account_id: account.value.account_id, url, events },
  });
  const after = await call(() => mail.getAccount(account.value.account_id));
  return list(req, after.ok ? after.value : account.value, { secret: r.value.secret });
}

async function deliveries(
  req: ConsoleRequest,
  a: AccountDetail,
  error?: string,
): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const { mail, base } = req.services;
  const hook = a.webhooks.find((w) => w.webhook_id === id);
  if (!hook) {
    return req.page({
      title: "Webhook not found",
      status: 404,
      error: "This account has no webhook with that id.",
      body: h(
        "p",
        null,
        h("a", { href: `${base}/mail/webhooks?account=${a.account_id}` }, "Back to the webhooks"),
      ),
    });
  }
  const log = await call(() => mail.listDeliveries(id));
  const again = req.c.req.query("redelivered");
  const tone = (s: string) => s === "delivered" ? "ok" : s === "failed" ? "bad" : "warn";
  return req.page({
    title: `Deliveries to ${hook.url}`,
    lead: "Newest first (at most 100). Sending again makes a new delivery with the same event.",
    status: error ? 400 : 200,
    notice: again ? `The event is on its way again as delivery ${again}.` : undefined,
    error: error ?? (log.ok ? undefined : log.message),
    body: [
      h(MailNav, { key: "nav", base, account: a.account_id, current: "Webhooks" }),
      log.ok
        ? h(Table, {
          key: "t",
          caption: "Delivery log",
          head: ["Delivery", "Event", "State", "Attempts", "Action"],
          rows: log.value.map((d) => [
            d.delivery_id,
            d.event_type,
            h(Badge, { tone: tone(d.state), text: d.state }),
            h(
              "ol",
              { class: "plain" },
              d.attempts.map((t) =>
                h(
                  "li",
                  { key: t.attempt },
                  h(MailTime, { at: t.at }),
                  `: ${t.error ?? `HTTP ${t.status_code}`}`,
                )
              ),
            ),
            h(PostForm, {
              action: `${base}/mail/webhooks/${id}/redeliver`,
              csrf: req.csrf,
              hidden: { account: a.account_id, delivery: d.delivery_id },
              label: "Send again",
              buttonLabel: `Send again: delivery ${d.delivery_id}`,
              variant: "secondary",
            }),
          ]),
          empty: "Nothing was delivered to this webhook yet.",
        })
        : null,
      h(
        "p",
        { key: "b" },
        h("a", { href: `${base}/mail/webhooks?account=${a.account_id}` }, "Back to the webhooks"),
      ),
    ],
  });
}

async function redeliver(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const f = await req.form();
  const { mail, base } = req.services;
  const account = await call(() => mail.getAccount(f.account ?? ""));
  if (!account.ok) return await withAccount(req, SCREEN, (a) => list(req, a));
  const log = await call(() => mail.listDeliveries(id));
  const known = account.value.webhooks.some((w) => w.webhook_id === id) && log.ok &&
    log.value.some((d) => d.delivery_id === f.delivery);
  if (!known) {
    return await deliveries(req, account.value, "This webhook has no delivery with that id.");
  }
  const r = await call(() => mail.redeliver(f.delivery));
  if (!r.ok) return await deliveries(req, account.value, r.message);
  await req.audit({
    action: "mail.webhook.redeliver",
    target: `mail-webhook:${id}`,
    before: { delivery_id: f.delivery },
    after: { delivery_id: r.value.delivery_id },
  });
  return req.c.redirect(
    `${base}/mail/webhooks/${id}?account=${account.value.account_id}&redelivered=${r.value.delivery_id}`,
    303,
  );
}

/** The mail webhooks screen. */
export const mailWebhooksScreen: Screen = {
  id: "mail-webhooks",
  path: SCREEN.path,
  title: SCREEN.title,
  group: "Mail API",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => withAccount(req, SCREEN, (a) => list(req, a)) },
    { method: "POST", path: "/", handle: register },
    {
      method: "GET",
      path: "/:id",
      handle: (req) => withAccount(req, SCREEN, (a) => deliveries(req, a)),
    },
    { method: "POST", path: "/:id/redeliver", handle: redeliver },
  ],
};
