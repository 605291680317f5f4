/**
 * The development outbox: an `EmailSender` that stores each message in the table `dev_outbox`
 * of the site's database instead of sending it, and a page that lists what was "sent" (newest
 * first), with every link clickable, so the signup, reset and e-mail-change flows can be
 * followed locally without a mail provider.
 *
 * @module
 */
import { h } from "preact";
import type { D1Database, EmailMessage, EmailSender } from "../d1.ts";
import { sitePage } from "./site_page.ts";

/** One stored message. */
export interface OutboxMessage extends EmailMessage {
  /** Row id. */
  id: number;
  /** When it was stored, milliseconds since the epoch. */
  sentAt: number;
}

/** The outbox of one database. */
export interface Outbox {
  /** The sender that stores messages. */
  send: EmailSender;
  /** The newest messages first (at most `limit`, default 50), optionally for one recipient. */
  list(options?: { limit?: number; to?: string }): Promise<OutboxMessage[]>;
  /**
   * The outbox page (HTML), in the app's look: `site` names the site in its header (default
   * the demo app), `home` where that name links to.
   */
  page(options?: { title?: string; to?: string; site?: string; home?: string }): Promise<string>;
}

const CREATE = `CREATE TABLE IF NOT EXISTS dev_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  to_addr TEXT NOT NULL,
  subject TEXT NOT NULL,
  html TEXT NOT NULL,
  text TEXT NOT NULL,
  sent_at INTEGER NOT NULL
)`;

const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Escapes text and turns its http(s) URLs into links. */
function linkify(text: string): string {
  return text.split(/(https?:\/\/[^\s<>"']+)/g).map((part, i) =>
    i % 2 === 1 ? `<a href="${esc(part)}">${esc(part)}</a>` : esc(part)
  ).join("");
}

/**
 * Creates the outbox table if needed and returns the outbox.
 *
 * @example
 * ```ts
 * import { openLibsql } from "../d1.ts";
 * import { createOutbox } from "./outbox.ts";
 * const outbox = await createOutbox(openLibsql(":memory:"));
 * await outbox.send({ to: "a@example.com", subject: "Hi", html: "<p>Hi</p>", text: "Hi" });
 * console.log((await outbox.list())[0].subject); // "Hi"
 * ```
 */
export async function createOutbox(db: D1Database): Promise<Outbox> {
  await db.prepare(CREATE).run();
  const list = async (
    options: { limit?: number; to?: string } = {},
  ): Promise<OutboxMessage[]> => {
    const limit = Math.min(Math.max(1, options.limit ?? 50), 500);
    const stmt = options.to
      ? db.prepare(
        "SELECT * FROM dev_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT ?",
      ).bind(options.to, limit)
      : db.prepare("SELECT * FROM dev_outbox ORDER BY id DESC LIMIT ?").bind(limit);
    const rows = await stmt.all<Record<string, unknown>>();
    return rows.results.map((r) => ({
      id: Number(r.id),
      to: String(r.to_addr),
      subject: String(r.subject),
      html: String(r.html),
      text: String(r.text),
      sentAt: Number(r.sent_at),
    }));
  };
  return {
    async send(m: EmailMessage): Promise<void> {
      await db.prepare(
        "INSERT INTO dev_outbox (to_addr, subject, html, text, sent_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(m.to, m.subject, m.html, m.text, Date.now()).run();
    },
    list,
    async page(options = {}): Promise<string> {
      const title = options.title ?? "Outbox";
      const mails = await list({ to: options.to });
      // the text with its links (long ones wrap: the page never gets wider than a phone)
      const items = mails.map((m) =>
        `<article class="mail">` +
        `<p class="muted">#${m.id} · ${esc(new Date(m.sentAt).toISOString())}` +
        ` · to <strong class="to">${esc(m.to)}</strong></p>` +
        `<h2 class="subject">${esc(m.subject)}</h2>` +
        `<pre class="text">${linkify(m.text)}</pre>` +
        `<details><summary>HTML version</summary>` +
        `<iframe sandbox title="HTML version of the e-mail" srcdoc="${esc(m.html)}"></iframe>` +
        `</details></article>`
      ).join("");
      return sitePage({
        site: options.site ?? "Gatehouse demo",
        home: options.home ?? "/",
        title,
        lead: 'Development only: the e-mails the site "sent", newest first.',
        body: [
          h(
            "p",
            { key: "how", class: "muted" },
            "Set ",
            h("code", null, "MAIL_API_KEY"),
            " and ",
            h("code", null, "MAIL_FROM"),
            " to send real ones.",
          ),
          items
            ? h("div", { key: "mails", dangerouslySetInnerHTML: { __html: items } })
            : h("p", { key: "none", class: "card" }, "No e-mails yet."),
        ],
      });
    },
  };
}
