/**
 * What every route of the mail API is given: the Hono environment (the checked API key) and
 * the server's parts (database, blobs, link signer, limits, webhooks, the credential checks).
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { KeyContext } from "./accounts.ts";
import type { BlobStore } from "./blobs.ts";
import type { MailDb } from "./db.ts";
import type { Linker } from "./items.ts";
import type { WebhookDispatcher } from "./webhooks.ts";

/** Hono environment of the router. */
export type MailEnv = { Variables: { key: KeyContext } };

/** Everything a route handler needs. */
export interface MailContext {
  /** Database. */
  db: MailDb;
  /** Blob store. */
  blobs: BlobStore;
  /** Link signer for a request. */
  linker(c: Context): Linker;
  /** Largest JSON body. */
  maxBodyBytes: number;
  /** Largest upload. */
  maxUploadBytes: number;
  /** The upload routes' body limit (after the operator token check). */
  uploadLimit: MiddlewareHandler<MailEnv>;
  /** Webhooks. */
  webhooks: WebhookDispatcher;
  /** Customer API-key check (auth and rate limit). */
  auth: MiddlewareHandler<MailEnv>;
  /** Mailroom operator-token check. */
  operatorAuth: MiddlewareHandler<MailEnv>;
}
