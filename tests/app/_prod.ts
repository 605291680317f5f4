/**
 * The whole reference app (`createApp`) in production mode on a loopback port: every secret
 * set, real OAuth client settings (GitHub), and a loopback stand-in for the HTTP mail API that
 * records every message the app sends.
 */
import { createApp } from "../../app/main.ts";
import { loadAppEnv } from "../../app/env.ts";
import { hashPassword } from "../../mod.ts";

/** A message as the mail API received it. */
export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface ProdApp {
  port: number;
  origin: string;
  /** Messages the app sent through the mail API, oldest first. */
  mails: Mail[];
  /**
   * The `n`th message (0-based, default: the one after those already here), when it arrives:
   * the flows hand mail to the sender after they answer.
   */
  mail(n?: number): Promise<Mail>;
  close(): Promise<void>;
}

/** Variables of a complete production configuration (plus `extra`). */
export async function productionVars(
  dir: string,
  mailApiUrl: string,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    MODE: "production",
    DATABASE_URL: `file:${dir}/app.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
    SESSION_SECRET: "prod-owner-session-secret-0123456789",
    OWNER_PASSWORD_HASH: await hashPassword("owner password", { iterations: 1000 }),
    OWNER_EMAILS: "owner@example.com",
    USERS_SESSION_SECRET: "prod-users-session-secret-0123456789",
    TOKEN_SECRET: "prod-token-secret-0123456789",
    STATE_SECRET: "prod-state-secret-0123456789",
    GITHUB_CLIENT_ID: "gh-client-id",
    GITHUB_CLIENT_SECRET: "gh-client-secret",
    BROKER_SECRET: "prod-broker-secret-0123456789",
    RELAY_DEMO_SESSION_SECRET: "prod-relay-session-secret-0123456789",
    RELAY_DEMO_RELAY_SECRET: "prod-relay-relay-secret-0123456789",
    MAIL_OPERATOR_TOKEN: "prod-operator-token-0123456789",
    CONSOLE_SESSION_SECRET: "prod-console-session-secret-0123456789",
    CONSOLE_RELAY_SECRET: "prod-console-relay-secret-0123456789",
    MAIL_SIGNING_SECRET: "prod-signing-secret-0123456789",
    MAIL_API_KEY: "re_test_key",
    MAIL_FROM: "Gatehouse <no-reply@example.com>",
    MAIL_API_URL: mailApiUrl,
    ...extra,
  };
}

/** Starts the app in production with `extra` variables (e.g. `APP_URL`). */
export async function startProdApp(extra: Record<string, string>): Promise<ProdApp> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-prod-" });
  const mails: Mail[] = [];
  const waiting: { n: number; resolve: (m: Mail) => void }[] = [];
  const mailApi = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      mails.push(await req.json());
      for (const w of waiting.filter((w) => w.n < mails.length)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(mails[w.n]);
      }
      return Response.json({ id: `msg_${mails.length}` });
    },
  );
  const mail = (n = mails.length): Promise<Mail> =>
    n < mails.length
      ? Promise.resolve(mails[n])
      : new Promise((resolve) => waiting.push({ n, resolve }));
  try {
    const vars = await productionVars(dir, `http://127.0.0.1:${mailApi.addr.port}/emails`, extra);
    const app = await createApp(loadAppEnv(vars));
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    return {
      port: server.addr.port,
      origin: `http://127.0.0.1:${server.addr.port}`,
      mails,
      mail,
      async close() {
        await server.shutdown();
        await mailApi.shutdown();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (err) {
    await mailApi.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
}
