/**
 * The mailroom API: the operator's side, under `/mailroom`, with its own credentials
 * (`Authorization: Bearer <operator token>`). Registers accounts, users, addresses, API keys
 * and webhooks; receives items with their envelope image; completes or fails pending requests
 * (uploading the scan PDF); lists an account's items and system rules, toggles a rule for the
 * account, redelivers a past webhook delivery and deactivates a webhook. A wrong method on
 * any of these paths is answered 432/405 before the token is checked (`methods.ts`).
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { MailContext, MailEnv } from "./context.ts";
import {
  createAccount,
  createAddress,
  createApiKey,
  createUser,
  revokeApiKey,
  updateAccount,
} from "./accounts.ts";
import { randomToken } from "./crypto.ts";
import type { MailEventType } from "./db.ts";
import { MailServerError } from "./errors.ts";
import { jsonBody, parseListQuery } from "./http.ts";
import { type RecordKind, unknownItem, unknownRecord } from "./not_found.ts";
import { findApiKeys, getAccount, listAccounts } from "./mailroom_lists.ts";
import { getItems, listItems, receiveItem } from "./items.ts";
import { isAutomationName } from "./rules.ts";
import { listSystemRules, setSystemRule } from "./system_rules.ts";
import { completeRequest, failRequest, pendingRequests } from "./requests.ts";
import { ITEM_TYPES } from "./types.ts";

const IMAGE_TYPES: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
};

function text(v: unknown, name: string, max = 200): string {
  if (typeof v !== "string" || v.trim() === "" || v.length > max) {
    throw new MailServerError(19, `${name} must be a string of 1 to ${max} characters`);
  }
  return v;
}

function id(v: unknown, name: string): string {
  const s = typeof v === "number" ? String(v) : v;
  if (typeof s !== "string" || !/^[1-9][0-9]{0,17}$/.test(s)) {
    throw new MailServerError(19, `${name} must be an id`);
  }
  return s;
}

/** The record id in the path; a malformed one is not found, as an unknown one (404). */
function pathId(c: Context, kind: RecordKind): string {
  const raw = c.req.param("id") ?? "";
  if (!/^[1-9][0-9]{0,17}$/.test(raw)) throw unknownRecord(kind, raw);
  return raw;
}

async function form(c: Context): Promise<Record<string, string | File>> {
  try {
    return await c.req.parseBody() as Record<string, string | File>;
  } catch {
    throw new MailServerError(19, "expected a multipart/form-data body");
  }
}

/** Routes under `/mailroom`. */
export function mailroomRouter(ctx: MailContext): Hono<MailEnv> {
  const { db, blobs } = ctx;
  const app = new Hono<MailEnv>();
  app.use("*", ctx.operatorAuth);

  app.post("/accounts", async (c) => {
    const b = await jsonBody(c);
    const accountId = await createAccount(db, {
      name: text(b.name, "name"),
      api_access: b.api_access === undefined ? true : Boolean(b.api_access),
      sandbox: Boolean(b.sandbox),
    });
    return c.json({ account_id: accountId }, 201);
  });

  app.get("/accounts", async (c) => {
    const q = parseListQuery(c);
    return c.json(await listAccounts(db, q.page, q.sortOrder));
  });

  app.get("/accounts/:id", async (c) => {
    return c.json(await getAccount(db, pathId(c, "account")));
  });

  app.get("/api-keys", async (c) => {
    return c.json({ data: await findApiKeys(db, c.req.query("prefix") ?? "") });
  });

  app.get("/deliveries/:id", async (c) => {
    return c.json(await ctx.webhooks.signedDelivery(pathId(c, "delivery")));
  });

  app.patch("/accounts/:id", async (c) => {
    const b = await jsonBody(c);
    if (b.status !== undefined && b.status !== "open" && b.status !== "closed") {
      throw new MailServerError(19, "status must be open or closed");
    }
    await updateAccount(db, pathId(c, "account"), {
      status: b.status as "open" | "closed" | undefined,
      api_access: b.api_access === undefined ? undefined : Boolean(b.api_access),
    });
    return c.json({ status: 1, message: "Account updated." });
  });

  app.post("/accounts/:id/users", async (c) => {
    const b = await jsonBody(c);
    const userId = await createUser(
      db,
      pathId(c, "account"),
      text(b.full_name, "full_name"),
    );
    return c.json({ user_id: userId }, 201);
  });

  app.post("/accounts/:id/addresses", async (c) => {
    const b = await jsonBody(c);
    const addressId = await createAddress(
      db,
      pathId(c, "account"),
      id(b.user_id, "user_id"),
      text(b.label ?? "Mailbox", "label"),
    );
    return c.json({ address_id: addressId }, 201);
  });

  app.post("/accounts/:id/api-keys", async (c) => {
    const b = await jsonBody(c);
    const key = await createApiKey(db, pathId(c, "account"), String(b.label ?? ""));
    return c.json(key, 201);
  });

  app.post("/api-keys/:id/revoke", async (c) => {
    await revokeApiKey(db, pathId(c, "key"));
    return c.json({ status: 1, message: "Key revoked." });
  });

  app.get("/accounts/:id/items", async (c) => {
    const accountId = pathId(c, "account");
    await getAccount(db, accountId); // 9410 naming the next step for an unknown account
    const q = parseListQuery(c);
    return c.json(await listItems(db, accountId, q.page, q.sortOrder, ctx.linker(c)));
  });

  app.get("/accounts/:id/rules", async (c) => {
    const accountId = pathId(c, "account");
    await getAccount(db, accountId);
    const q = parseListQuery(c);
    return c.json(await listSystemRules(db, accountId, q.page, q.sortOrder));
  });

  app.put("/accounts/:id/rules", async (c) => {
    const accountId = pathId(c, "account");
    const b = await jsonBody(c);
    if (!isAutomationName(b.automation_name)) {
      throw new MailServerError(
        19,
        "automation_name must be auto_scan, auto_shred or auto_discard",
      );
    }
    if (b.is_active !== 1 && b.is_active !== 0) {
      throw new MailServerError(19, "is_active must be 1 or 0");
    }
    await getAccount(db, accountId);
    const changed = await setSystemRule(db, accountId, b.automation_name, b.is_active === 1);
    return c.json({
      status: 1,
      message: "Rule status updated successfully.",
      users_changed: changed,
    });
  });

  app.post("/deliveries/:id/redeliver", async (c) => {
    const deliveryId = await ctx.webhooks.redeliver(pathId(c, "delivery"));
    return c.json({ delivery_id: deliveryId }, 201);
  });

  app.post("/accounts/:id/webhooks", async (c) => {
    const b = await jsonBody(c);
    if (b.events !== undefined && !Array.isArray(b.events)) {
      throw new MailServerError(19, "events must be an array");
    }
    const hook = await ctx.webhooks.register(
      pathId(c, "account"),
      text(b.url, "url", 2000),
      b.events as MailEventType[] | undefined,
    );
    return c.json(hook, 201);
  });

  app.post("/webhooks/:id/deactivate", async (c) => {
    await ctx.webhooks.deactivate(pathId(c, "webhook"));
    return c.json({ status: 1, message: "Webhook deactivated." });
  });

  app.get("/webhooks/:id/deliveries", async (c) => {
    return c.json({ data: await ctx.webhooks.deliveries(pathId(c, "webhook")) });
  });

  app.post("/items", ctx.uploadLimit, async (c) => {
    const f = await form(c);
    const envelope = f.envelope;
    if (!(envelope instanceof File) || envelope.size === 0 || !IMAGE_TYPES[envelope.type]) {
      throw new MailServerError(19, "envelope must be a PNG, JPEG or WebP image file");
    }
    const type = f.item_type ?? "letter";
    if (typeof type !== "string" || !ITEM_TYPES.includes(type)) {
      throw new MailServerError(19, `item_type must be one of ${ITEM_TYPES.join(", ")}`);
    }
    const receivedAt = f.received_at === undefined ? undefined : Date.parse(String(f.received_at));
    if (receivedAt !== undefined && !Number.isFinite(receivedAt)) {
      throw new MailServerError(19, "received_at must be an ISO 8601 time");
    }
    const input = {
      address_id: id(f.address_id, "address_id"),
      sender_name: text(f.sender_name, "sender_name"),
      item_type: type,
      received_at: receivedAt,
    };
    const coverKey = `covers/${randomToken(16)}.${IMAGE_TYPES[envelope.type]}`;
    await blobs.put(coverKey, new Uint8Array(await envelope.arrayBuffer()));
    try {
      const mailId = await receiveItem(db, { ...input, cover_key: coverKey });
      return c.json({ mail_id: mailId }, 201);
    } catch (err) {
      await blobs.delete(coverKey);
      throw err;
    }
  });

  app.get("/items/:id", async (c) => {
    const mailId = pathId(c, "item");
    const [item] = await getItems(db, [mailId], ctx.linker(c));
    if (!item) throw unknownItem(mailId);
    return c.json(item);
  });

  app.get("/requests", async (c) => {
    const limit = Number(c.req.query("limit") ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new MailServerError(19, "limit must be 1 to 1000");
    }
    return c.json({ data: await pendingRequests(db, limit) });
  });

  app.post("/items/:id/complete", ctx.uploadLimit, async (c) => {
    const mailId = pathId(c, "item");
    const isForm = (c.req.header("content-type") ?? "").includes("multipart/form-data");
    const f = isForm ? await form(c) : {};
    let pdfKey: string | undefined;
    if (f.scan !== undefined) {
      const scan = f.scan;
      const head = scan instanceof File ? await scan.slice(0, 5).text() : "";
      if (!(scan instanceof File) || head !== "%PDF-") {
        throw new MailServerError(19, "scan must be a PDF file");
      }
      pdfKey = `scans/${randomToken(16)}.pdf`;
      await blobs.put(pdfKey, new Uint8Array(await scan.arrayBuffer()));
    }
    const pages = f.page_count === undefined ? undefined : Number(f.page_count);
    if (pages !== undefined && (!Number.isInteger(pages) || pages < 0 || pages > 10000)) {
      throw new MailServerError(19, "page_count must be a whole number");
    }
    try {
      const stale = await completeRequest(db, mailId, { pdf_key: pdfKey, page_count: pages });
      for (const key of stale) await blobs.delete(key);
    } catch (err) {
      if (pdfKey) await blobs.delete(pdfKey);
      throw err;
    }
    return c.json({ status: 1, message: "Request completed." });
  });

  app.post("/items/:id/fail", async (c) => {
    const b = await jsonBody(c);
    await failRequest(db, pathId(c, "item"), text(b.reason, "reason", 500));
    return c.json({ status: 1, message: "Request failed." });
  });
  return app;
}
