/**
 * Mail-scanning API: a typed client (`MailClient`) for the API of a virtual-mailbox service, and
 * a server (`createMailServer`) that implements it on libSQL as a Hono router, with a mailroom
 * (operator) API, signed file links, signed webhooks, a sandbox and an OpenAPI document.
 *
 * @example
 * ```ts
 * import { MailClient } from "@gatehouse/gatehouse/mail";
 * const client = new MailClient({ baseUrl: "https://api.example", apiKey: "gh_live_..." });
 * const page = await client.listItems({ sort_order: "desc", page: 1 });
 * ```
 *
 * @module
 */
import { MailDb, type SqlClient as MailSqlClient } from "./lib/mail/db.ts";
import type { BlobStore as MailBlobStore } from "./lib/mail/blobs.ts";
import { prepareSandbox, type SandboxKey as Sandbox } from "./lib/mail/sandbox_setup.ts";
import { parseAllowTargets } from "./lib/mail/webhook_targets.ts";

export {
  type DestroyOptions,
  type ListQuery,
  MailApiError,
  MailClient,
  type MailClientOptions,
  type RescanOptions,
  type TestItemInput,
} from "./lib/mail/client.ts";
export {
  MailroomClient,
  type MailroomClientOptions,
  type ReceiveItemInput,
} from "./lib/mail/mailroom_client.ts";
export {
  createMailServer,
  MAIL_BASE_PATH,
  type MailRequestInfo,
  type MailServer,
  type MailServerOptions,
} from "./lib/mail/server.ts";
export type { AuthThrottleOptions } from "./lib/mail/auth_throttle.ts";
export { type MailErrorCode, type MailErrorInfo, mailErrors } from "./lib/mail/errors.ts";
export {
  ITEM_ACTIONS,
  ITEM_STATUSES,
  type ItemAction,
  type ItemStatus,
} from "./lib/mail/lifecycle.ts";
export { AUTOMATION_NAMES, type AutomationName } from "./lib/mail/rules.ts";
export {
  type ActionResult,
  type ChangeSource,
  type MailItem,
  MAX_MAIL_IDS,
  type Page,
  PAGE_SIZE,
  type SortOrder,
  type StatusChange,
  type SystemRuleRow,
} from "./lib/mail/types.ts";
export { type BlobStore, LocalBlobStore, MemoryBlobStore } from "./lib/mail/blobs.ts";
export {
  SIGNATURE_HEADER,
  signWebhook,
  TIMESTAMP_HEADER,
  verifyWebhook,
  type VerifyWebhookInput,
} from "./lib/mail/webhook_signature.ts";
export type { DeliveryLog, SignedDelivery, WebhookOptions } from "./lib/mail/webhooks.ts";
export type { Resolver, WebhookTargetOptions } from "./lib/mail/webhook_targets.ts";
export { MAIL_EVENT_TYPES, type MailEvent, type MailEventType } from "./lib/mail/db.ts";
export type { PendingRequest } from "./lib/mail/requests.ts";
export type {
  AccountDetail,
  AccountRecord,
  AddressRecord,
  ApiKeyRecord,
  UserRecord,
  WebhookRecord,
} from "./lib/mail/mailroom_lists.ts";
export type { CreatedKey } from "./lib/mail/accounts.ts";
export type {
  ItemReceivedData,
  RequestCompletedData,
  RequestFailedData,
  RuleChangedData,
  WebhookPayload,
} from "./lib/mail/event_types.ts";
export type { RateLimitOptions } from "./lib/mail/rate_limit.ts";
export { type Json, openApiDocument } from "./lib/mail/openapi.ts";
export type {
  SqlClient,
  SqlResult,
  SqlRow,
  SqlStatement,
  SqlTransaction,
  SqlValue,
} from "./lib/mail/db.ts";
export { type SandboxKey, sandboxLines } from "./lib/mail/sandbox_setup.ts";
// What a program serving the API needs around it, as `deno task mail` uses them: the database
// file made private before the client opens it, address ranges for a `clientAddress` behind
// trusted proxies (the ranges `webhooks.allowTargets` reads), and the SIGUSR1 guard.
export {
  type PrepareOptions,
  preparePrivateLibsqlFile,
} from "./lib/server/storage/private_files.ts";
export { ipInRanges, type IPRange, parseIP, parseRange } from "./lib/server/net/ip.ts";
export { guardInspectorSignal, type SignalGuard } from "./lib/inspector_signal.ts";

/**
 * Development: creates the mail tables if missing, then finds or makes the sandbox account
 * (with sample items on its address), revokes the keys an earlier call with the same `label`
 * made and returns a new sandbox key (`gh_test_…`) labelled `label`. Keys with other labels are
 * left alone. Never call it in production: the key is meant to be printed.
 *
 * @example
 * ```ts ignore
 * import { MemoryBlobStore, prepareSandboxKey, sandboxLines } from "@gatehouse/gatehouse/mail";
 * const key = await prepareSandboxKey(client, new MemoryBlobStore(), "dev server");
 * console.log(sandboxLines("http://localhost:8000/api/account-docs/v2", key).join("\n"));
 * ```
 */
export async function prepareSandboxKey(
  client: MailSqlClient,
  blobs: MailBlobStore,
  label: string,
): Promise<Sandbox> {
  const db = new MailDb(client);
  await db.migrate();
  return await prepareSandbox(db, blobs, label);
}

/**
 * Checks a webhook allow list (`MailServerOptions.webhooks.allowTargets`) the way the server
 * reads it; throws an Error naming the first entry that is neither an address, a range nor a
 * host name (with an optional port).
 *
 * @example
 * ```ts
 * import { checkWebhookAllowTargets } from "@gatehouse/gatehouse/mail";
 * checkWebhookAllowTargets(["127.0.0.1:9000", "10.20.0.0/16", "hooks.internal"]);
 * ```
 */
export function checkWebhookAllowTargets(list: readonly string[]): void {
  parseAllowTargets(list);
}
