/**
 * The console's home: what each screen is for, how many people have accounts, and the latest
 * entries of the audit log.
 *
 * @module
 */
import { h } from "preact";
import { listAudit, listUsers } from "../../d1.ts";
import type { Screen } from "./context.ts";
import { Card, Table, When } from "./ui.ts";

const PLACES: [string, string, string][] = [
  ["/users", "Users", "Find people, make them administrators, sign them out, delete accounts."],
  ["/relay", "Relay sites", "Sites that sign people in through the app's relay broker."],
  ["/mail", "Mail API", "Accounts, keys, rules, webhooks and items of the mail-scanning API."],
  ["/server", "Web server", "The live configuration and health of a Gatehouse server."],
  ["/audit", "Audit log", "Every change made in the console: who, what, when."],
];

/** The home screen. */
export const homeScreen: Screen = {
  id: "home",
  path: "",
  title: "Console home",
  permission: "admin",
  routes: [{
    method: "GET",
    path: "/",
    async handle(req) {
      const { db, base } = req.services;
      const [everyone, admins, audit] = await Promise.all([
        listUsers(db, { limit: 1 }),
        listUsers(db, { limit: 1, adminsOnly: true }),
        listAudit(db, { limit: 8 }),
      ]);
      return req.page({
        title: "Console home",
        lead: `Welcome, ${req.op.user.name ?? req.op.user.email}. ` +
          (req.op.owner
            ? "You are an owner of this site."
            : "You are an administrator of this site."),
        body: [
          h(
            "div",
            { class: "grid", key: "places" },
            PLACES.map(([path, title, text]) =>
              h(
                Card,
                { key: path, title },
                h("p", null, text),
                h("p", null, h("a", { href: `${base}${path}` }, `Open: ${title}`)),
              )
            ),
          ),
          h(
            Card,
            { key: "people", title: "People" },
            h(
              "p",
              null,
              everyone.ok && admins.ok
                ? `${everyone.total} ${everyone.total === 1 ? "account" : "accounts"}, ` +
                  `${admins.total} of them ${
                    admins.total === 1 ? "an administrator" : "administrators"
                  }.`
                : "The user tables could not be read just now.",
            ),
          ),
          h(
            Card,
            { key: "recent", title: "Latest changes" },
            audit.ok
              ? h(Table, {
                caption: "The latest entries of the audit log",
                head: ["When", "Who", "What", "Target"],
                rows: audit.entries.map((e) => [
                  h(When, { ms: e.at }),
                  e.actorEmail,
                  e.action,
                  e.target,
                ]),
                empty: "Nothing has been changed in the console yet.",
              })
              : h("p", null, "The audit log could not be read just now."),
            h("p", null, h("a", { href: `${base}/audit` }, "The whole audit log")),
          ),
        ],
      });
    },
  }],
};
