/**
 * The mail-scanning API in the reference app, mounted at `/api/account-docs/v2` on the app's
 * libSQL database (`DATABASE_URL`, default `file:.data/gatehouse.db`).
 *
 * Variables: `MAIL_OPERATOR_TOKEN` (bearer token of the mailroom API under
 * `/api/account-docs/v2/mailroom`), `MAIL_SIGNING_SECRET` (signs file links) — both required in
 * production, fixed development defaults otherwise; `MAIL_BLOB_DIR` (envelope images and scans,
 * default `.data/mail-blobs`); `APP_URL` / `APP_HOSTS` (public origin of file links, see
 * `public_url.ts`); `TRUSTED_PROXIES` (proxies whose `X-Forwarded-For` names the client for the
 * wrong-key throttle, see `client_address.ts`); `MAIL_WEBHOOK_ALLOW` (comma-separated internal
 * targets webhooks may go to all the same: addresses, CIDR ranges, host names, each but a
 * range with an optional `:port`; default none, see `lib/mail/webhook_targets.ts`).
 *
 * In development `deno task start` also prints a ready sandbox key (`mailSandboxLines`): the
 * key in one step, for an account whose address has sample items.
 *
 * @module
 */
import { Hono } from "hono";
import {
  checkWebhookAllowTargets,
  createMailServer,
  LocalBlobStore,
  type MailRequestInfo,
  type MailServer,
  prepareSandboxKey,
  sandboxLines,
} from "../mail.ts";
import type { AppEnv } from "./env.ts";
import { siteSecret } from "./dev_secret.ts";
import { openAppDatabase } from "./relay_registry.ts";
import { publicOrigin } from "./public_url.ts";
import { clientAddress } from "./client_address.ts";

const servers = new WeakMap<AppEnv, Promise<MailServer>>();

/**
 * The `MAIL_WEBHOOK_ALLOW` entries (comma-separated, blanks dropped), checked: throws an Error
 * naming the variable and the entry that is neither an address, a range nor a host name.
 *
 * @example
 * ```ts
 * import { loadAppEnv } from "./env.ts";
 * import { webhookAllow } from "./mail.ts";
 * webhookAllow(loadAppEnv({ MAIL_WEBHOOK_ALLOW: "127.0.0.1:3000, 10.20.0.0/16" }));
 * // ["127.0.0.1:3000", "10.20.0.0/16"]
 * ```
 */
export function webhookAllow(env: AppEnv): string[] {
  const list = (env.vars.MAIL_WEBHOOK_ALLOW ?? "").split(",").map((s) => s.trim())
    .filter(Boolean);
  try {
    checkWebhookAllowTargets(list);
  } catch (err) {
    throw new Error(`MAIL_WEBHOOK_ALLOW: ${(err as Error).message}`);
  }
  return list;
}

/**
 * The app's one mail server for an environment (made on first use): the mounted API and the
 * operator's console share it, so the console's calls go through the same routes, checks and
 * webhook dispatcher as everyone's.
 */
export function appMailServer(env: AppEnv): Promise<MailServer> {
  let server = servers.get(env);
  if (!server) {
    server = (async () =>
      await createMailServer({
        client: await openAppDatabase(env),
        operatorToken: siteSecret(env, "MAIL_OPERATOR_TOKEN"),
        signingSecret: siteSecret(env, "MAIL_SIGNING_SECRET"),
        blobDir: env.vars.MAIL_BLOB_DIR ?? ".data/mail-blobs",
        publicUrl: (request) => publicOrigin(env, request),
        clientAddress: clientAddress(env),
        webhooks: { allowTargets: webhookAllow(env) },
      }))();
    servers.set(env, server);
  }
  return server;
}

/** Builds the site: every request under the mount path goes to the mail server. */
export async function createMailSite(env: AppEnv): Promise<Hono> {
  const mail = await appMailServer(env);
  const site = new Hono();
  // c.env is what Deno.serve passed: the connection's address, for the wrong-key throttle.
  site.all("*", (c) => mail.fetch(c.req.raw, c.env as MailRequestInfo | undefined));
  return site;
}

/**
 * Development only: prepares the sandbox account on the app's database (made on first start,
 * reused after) with a new key, and returns the lines to print at start; in production, none
 * (a key is never printed there).
 */
export async function mailSandboxLines(env: AppEnv, origin: string): Promise<string[]> {
  if (env.MODE !== "development") return [];
  const blobs = new LocalBlobStore(env.vars.MAIL_BLOB_DIR ?? ".data/mail-blobs");
  const sandbox = await prepareSandboxKey(await openAppDatabase(env), blobs, "deno task start");
  return ["Mail-scanning API:", ...sandboxLines(`${origin}/api/account-docs/v2`, sandbox)];
}
