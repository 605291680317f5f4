/**
 * Parsing at the HTTP edge: list queries, JSON bodies, action bodies, and the error answer.
 *
 * @module
 */
import type { Context } from "hono";
import { MailServerError } from "./errors.ts";
import type { ActionOptions } from "./actions.ts";
import type { ItemAction } from "./lifecycle.ts";
import { MAX_MAIL_IDS, type SortOrder } from "./types.ts";

/** Parses `page` (default 1) and `sort_order` (default desc); anything else is 19. */
export function parseListQuery(c: Context): { page: number; sortOrder: SortOrder } {
  const rawPage = c.req.query("page");
  const rawSort = c.req.query("sort_order");
  const page = rawPage === undefined || rawPage === "" ? 1 : Number(rawPage);
  if (!Number.isSafeInteger(page) || page < 1 || !/^\d*$/.test(rawPage ?? "")) {
    throw new MailServerError(19, "page must be an integer from 1");
  }
  const sort = rawSort === undefined || rawSort === "" ? "desc" : rawSort.toLowerCase();
  if (sort !== "asc" && sort !== "desc") {
    throw new MailServerError(19, "sort_order must be asc or desc");
  }
  return { page, sortOrder: sort };
}

/** Reads a JSON object body; 19 when it is not one. */
export async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new MailServerError(19, "the body must be a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new MailServerError(19, "the body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

const ID = /^[A-Za-z0-9_-]{1,40}$/;

function asId(v: unknown): string | null {
  if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return String(v);
  if (typeof v === "string" && ID.test(v)) return v;
  return null;
}

/**
 * Parses an action body: `mail_ids` (array) or `mail_id` (one), plus the options the action
 * allows: `delete_digital_copy` (shred, discard), `rescan_type` 1–3 and `comment` (rescan).
 */
export function parseActionBody(
  body: Record<string, unknown>,
  action: ItemAction,
  cancel: boolean,
): { mailIds: string[]; options: ActionOptions } {
  if (body.mail_ids !== undefined && body.mail_id !== undefined) {
    throw new MailServerError(19, "give mail_ids or mail_id, not both");
  }
  const raw = body.mail_ids !== undefined
    ? body.mail_ids
    : body.mail_id !== undefined
    ? [body.mail_id]
    : undefined;
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_MAIL_IDS) {
    throw new MailServerError(
      19,
      `mail_ids must be an array of 1 to ${MAX_MAIL_IDS} item ids (or give one mail_id)`,
    );
  }
  const ids = raw.map(asId);
  if (ids.some((id) => id === null)) {
    throw new MailServerError(19, "every mail id must be a string of letters, digits, _ or -");
  }
  const options: ActionOptions = {};
  const allowed = new Set<string>(
    cancel
      ? []
      : action === "shred" || action === "discard"
      ? ["delete_digital_copy"]
      : action === "rescan"
      ? ["rescan_type", "comment"]
      : [],
  );
  for (const name of ["delete_digital_copy", "rescan_type", "comment"]) {
    if (body[name] === undefined || body[name] === null) continue;
    if (!allowed.has(name)) throw new MailServerError(19, `${name} is not allowed here`);
  }
  const ddc = body.delete_digital_copy;
  if (ddc !== undefined && ddc !== null) {
    if (ddc !== true && ddc !== false && ddc !== 0 && ddc !== 1) {
      throw new MailServerError(19, "delete_digital_copy must be true or false");
    }
    options.delete_digital_copy = Boolean(ddc);
  }
  const rt = body.rescan_type;
  if (rt !== undefined && rt !== null) {
    const n = typeof rt === "string" && /^\d$/.test(rt) ? Number(rt) : rt;
    if (n !== 1 && n !== 2 && n !== 3) {
      throw new MailServerError(19, "rescan_type must be 1, 2 or 3");
    }
    options.rescan_type = n;
  }
  const comment = body.comment;
  if (comment !== undefined && comment !== null) {
    if (typeof comment !== "string" || comment.length > 1000) {
      throw new MailServerError(19, "comment must be a string of at most 1000 characters");
    }
    options.comment = comment;
  }
  return { mailIds: [...new Set(ids as string[])], options };
}

/** The error answer for any thrown value: typed errors as they are, anything else 18/500. */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof MailServerError) {
    return c.json(err.toJSON(), err.status as 400, err.headers);
  }
  console.error("mail api: internal error:", err instanceof Error ? err.message : String(err));
  const e = new MailServerError(18);
  return c.json(e.toJSON(), 500);
}
