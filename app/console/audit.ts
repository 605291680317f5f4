/**
 * The audit log screen: every change made in the console, newest first, filtered by the start
 * of the action (`user.`), of the actor's e-mail or of the target, with the value before and
 * after each change.
 *
 * @module
 */
import { h } from "preact";
import { type AuditEntry, listAudit, UNFINISHED_AUDIT_ACTION } from "../../d1.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { Table, When } from "./ui.ts";

/** Entries per page. */
export const AUDIT_PAGE_SIZE = 50;

function change(e: AuditEntry) {
  if (e.action === UNFINISHED_AUDIT_ACTION) {
    return h(
      "span",
      { class: "muted" },
      "Unfinished: written before the request; its details could not be written after it, so it may or may not have changed something.",
    );
  }
  if (e.before === null && e.after === null) return h("span", { class: "muted" }, "—");
  const show = (label: string, v: unknown) =>
    v === null ? null : h(
      "div",
      { key: label },
      h("p", { class: "label" }, label),
      h("pre", { class: "json" }, JSON.stringify(v, null, 2)),
    );
  return h(
    "details",
    null,
    h("summary", null, "Before and after"),
    show("Before", e.before),
    show("After", e.after),
  );
}

async function list(req: ConsoleRequest): Promise<Response> {
  const { c, services } = req;
  const filters = {
    action: (c.req.query("action") ?? "").trim().slice(0, 100),
    actor: (c.req.query("actor") ?? "").trim().slice(0, 320),
    target: (c.req.query("target") ?? "").trim().slice(0, 500),
  };
  const before = Number(c.req.query("before"));
  const page = await listAudit(services.db, {
    ...filters,
    before: Number.isSafeInteger(before) && before > 0 ? before : undefined,
    limit: AUDIT_PAGE_SIZE,
  });
  const older = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  if (page.ok && page.next) older.set("before", String(page.next));
  const field = (name: keyof typeof filters, label: string, hint: string) =>
    h(
      "div",
      { class: "field", key: name },
      h("label", { for: `audit-${name}` }, label),
      h("input", {
        id: `audit-${name}`,
        type: "text",
        name,
        value: filters[name],
        placeholder: hint,
        autocomplete: "off",
      }),
    );
  return req.page({
    title: "Audit log",
    lead: "Every change made in the console: who made it, when, and the thing before and after.",
    body: [
      h(
        "form",
        { key: "filter", method: "get", action: `${services.base}/audit`, class: "inline" },
        field("action", "Action starts with", "user."),
        field("actor", "Actor's e-mail starts with", "ada@"),
        field("target", "Target starts with", "user:"),
        h("button", { type: "submit" }, "Filter"),
      ),
      page.ok
        ? h(Table, {
          key: "t",
          caption: "Audit entries, newest first",
          head: ["When", "Who", "What", "Target", "Change"],
          rows: page.entries.map((e) => [
            h(When, { ms: e.at }),
            e.actorEmail,
            h("code", null, e.action),
            h("code", null, e.target),
            change(e),
          ]),
          empty: "No entry matches these filters.",
        })
        : h("p", { key: "e", class: "alert" }, "The audit log could not be read just now."),
      page.ok && page.next
        ? h(
          "nav",
          { key: "p", class: "pager", "aria-label": "Pages of the audit log" },
          h(
            "a",
            { class: "button secondary", href: `${services.base}/audit?${older}` },
            "Older entries",
          ),
        )
        : null,
    ],
  });
}

/** The audit log screen. */
export const auditScreen: Screen = {
  id: "audit",
  path: "/audit",
  title: "Audit log",
  permission: "admin",
  routes: [{ method: "GET", path: "/", handle: list }],
};
