/**
 * Sandbox mode: keys of a sandbox account may create test items on demand and complete their
 * pending requests, so an integration can walk the whole lifecycle without a mailroom. Keys of
 * other accounts get 433.
 *
 * @module
 */
import { Hono } from "hono";
import type { MailContext, MailEnv } from "./context.ts";
import { MailServerError } from "./errors.ts";
import { jsonBody } from "./http.ts";
import { receiveItem } from "./items.ts";
import { completeRequest } from "./requests.ts";
import { randomToken } from "./crypto.ts";
import { envelopeSvg, samplePdf } from "./sample_files.ts";
import { ITEM_TYPES } from "./types.ts";
import { resolveAddress } from "./accounts.ts";

/** Routes under `/sandbox`. */
export function sandboxRouter(ctx: MailContext): Hono<MailEnv> {
  const app = new Hono<MailEnv>();
  app.use("*", ctx.auth, async (c, next) => {
    if (!c.var.key.sandbox) {
      throw new MailServerError(
        433,
        "You don't have access to the API specified. Sandbox endpoints take a sandbox key " +
          "(gh_test_...): `deno task mail` prints one, or an operator creates a sandbox account " +
          'with POST /mailroom/accounts {"name": "...", "sandbox": true}.',
      );
    }
    await next();
  });

  app.post("/items", async (c) => {
    const body = await jsonBody(c);
    const accountId = c.var.key.accountId;
    let addressId = body.address_id === undefined ? undefined : String(body.address_id);
    if (addressId === undefined) {
      const r = await ctx.db.execute({
        sql: "SELECT id FROM mail_addresses WHERE account_id = ? ORDER BY id LIMIT 1",
        args: [accountId],
      });
      if (!r.rows[0]) {
        throw new MailServerError(
          89,
          `Address not found: account ${accountId} has no address yet. Create one with ` +
            `POST /mailroom/accounts/${accountId}/addresses {"user_id": "..."} (a user first: ` +
            `POST /mailroom/accounts/${accountId}/users {"full_name": "..."}), then retry.`,
        );
      }
      addressId = String(r.rows[0].id);
    }
    await resolveAddress(ctx.db, accountId, addressId);
    const sender = body.sender_name ?? "Sandbox Sender";
    const type = body.item_type ?? "letter";
    if (typeof sender !== "string" || sender.length === 0 || sender.length > 200) {
      throw new MailServerError(19, "sender_name must be a string of 1 to 200 characters");
    }
    if (typeof type !== "string" || !ITEM_TYPES.includes(type)) {
      throw new MailServerError(19, `item_type must be one of ${ITEM_TYPES.join(", ")}`);
    }
    const coverKey = `covers/${randomToken(16)}.svg`;
    await ctx.blobs.put(coverKey, envelopeSvg(sender));
    const mailId = await receiveItem(ctx.db, {
      address_id: addressId,
      sender_name: sender,
      item_type: type,
      cover_key: coverKey,
    }, "sandbox");
    return c.json({ status: 1, message: "Test item created.", mail_id: mailId });
  });

  app.post("/items/:mail_id/complete", async (c) => {
    const mailId = c.req.param("mail_id");
    const r = await ctx.db.execute({
      sql: "SELECT account_id FROM mail_items WHERE id = ?",
      args: [/^\d{1,18}$/.test(mailId) ? mailId : "0"],
    });
    if (!r.rows[0] || String(r.rows[0].account_id) !== c.var.key.accountId) {
      throw new MailServerError(
        14,
        `Item not found: ${mailId.slice(0, 40)} is not an item of this account. GET /items ` +
          "lists your items' mail_id values; POST /sandbox/items makes a new one.",
      );
    }
    const pdfKey = `scans/${randomToken(16)}.pdf`;
    await ctx.blobs.put(pdfKey, samplePdf(`Sandbox scan of item ${mailId}`));
    try {
      const stale = await completeRequest(ctx.db, mailId, { pdf_key: pdfKey, page_count: 1 });
      for (const key of stale) await ctx.blobs.delete(key);
    } catch (err) {
      await ctx.blobs.delete(pdfKey);
      throw err;
    }
    return c.json({ status: 1, message: "Pending request completed." });
  });
  return app;
}
