/**
 * The operator's console, mounted at `/admin`: sign-in with the toolkit, then the screens of
 * `screens.ts` (users, relay sites, the mail API, a Gatehouse server, the audit log), each
 * behind its permission, every change behind the CSRF middleware and written to the audit
 * log. It talks to the toolkit's tables through the `/d1` functions, to the mail API through
 * its mailroom HTTP API (in process, with the operator token) and to a Gatehouse server
 * through its admin API: the same public APIs everyone has.
 *
 * Variables: `CONSOLE_SESSION_SECRET`, `CONSOLE_RELAY_SECRET` (development defaults, required
 * in production), `OWNER_EMAILS` (owners; development default `owner@example.com`),
 * `CONSOLE_SSO` (`direct`, the default: provider buttons sign in directly; `relay`: through the
 * app's relay broker), `GATEHOUSE_ADMIN` (the server to manage; default `localhost:2019`), and
 * the users site's `TOKEN_SECRET`, `DATABASE_URL`, mail settings.
 *
 * @module
 */
import { Hono } from "hono";
import { clearSessionCookie, isOwner, type SessionConfig } from "../../mod.ts";
import {
  applyAuditSchema,
  applyUserListIndexes,
  type D1Database,
  migrate,
  openLibsql,
  readUserSession,
  recordAudit,
  reserveAudit,
  signOut,
  withdrawAudit,
} from "../../d1.ts";
import { MailroomClient, type MailServer } from "../../mail.ts";
import type { AppEnv } from "../env.ts";
import { siteSecret } from "../dev_secret.ts";
import { openAppDatabase, registerRelaySite } from "../relay_registry.ts";
import { appMailServer } from "../mail.ts";
import { mailSenderFromEnv } from "../mailer.ts";
import { createOutbox } from "../outbox.ts";
import { BROKER_PATH } from "../broker.ts";
import { DEV_OWNER_EMAIL } from "../owner.ts";
import { AdminApi } from "./admin_api.ts";
import { serveCss, serveScript } from "./assets.ts";
import { type ConsoleRequest, type ConsoleServices, type Operator, permits } from "./context.ts";
import { csrfProtection, csrfToken } from "./csrf.ts";
import { ensureDevOwner } from "./dev_owner.ts";
import { type NavItem, pageResponse, type ShellContext } from "./layout.ts";
import { mountSignIn, type SsoMode } from "./signin.ts";
import { routePath, SCREENS } from "./screens.ts";
import { h } from "preact";

/** Where the reference app mounts the console. */
export const CONSOLE_PATH = "/admin";
/** The console's id at the relay broker. */
export const CONSOLE_RELAY_ID = "console";
/** Largest request body of the console (a whole config or Gatehousefile): 1 MiB. */
export const CONSOLE_BODY_LIMIT = 1024 * 1024;
/** Lifetime of a console session: 12 hours. */
export const CONSOLE_SESSION_SECONDS = 43_200;

/** Options of {@linkcode createConsole}. */
export interface ConsoleOptions {
  /** The app's environment. */
  env: AppEnv;
  /** Mount path; default {@linkcode CONSOLE_PATH}. */
  base?: string;
  /** The toolkit's tables; default `DATABASE_URL`. */
  db?: D1Database;
  /** PBKDF2 iterations of new hashes (tests); default the core's. */
  iterations?: number;
}

type Vars = { Variables: { op: Operator } };

const USERS_APP_NAME = "Gatehouse multi-user demo";

function ssoMode(env: AppEnv): SsoMode {
  const raw = env.vars.CONSOLE_SSO?.trim() || "direct";
  if (raw !== "direct" && raw !== "relay") {
    throw new Error(`CONSOLE_SSO must be direct or relay, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

/**
 * A value as the audit log keeps it: itself, or (past 60,000 characters of JSON) its size and
 * SHA-256, so a large config change is still recorded.
 */
async function fitForAudit(value: unknown): Promise<unknown> {
  if (value === undefined) return null;
  const text = JSON.stringify(value) ?? "null";
  if (text.length <= 60_000) return value;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return {
    omitted: "too large for the audit log",
    characters: text.length,
    sha256: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

/**
 * Builds the console (routes relative to its mount path).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadAppEnv } from "../env.ts";
 * import { createConsole } from "./mod.ts";
 * const app = new Hono().route("/admin", await createConsole({ env: loadAppEnv({}) }));
 * ```
 */
export async function createConsole(options: ConsoleOptions): Promise<Hono> {
  const { env } = options;
  const base = options.base ?? CONSOLE_PATH;
  const production = env.MODE === "production";
  const secret = siteSecret(env, "CONSOLE_SESSION_SECRET");
  const session: SessionConfig = {
    secret,
    cookieName: "__Host-console-session",
    maxAge: CONSOLE_SESSION_SECONDS,
  };
  const owners = env.vars.OWNER_EMAILS ?? (production ? "" : DEV_OWNER_EMAIL);
  const sso = ssoMode(env);
  const server = new AdminApi(env.vars.GATEHOUSE_ADMIN?.trim() || "localhost:2019");
  const tokenSecret = siteSecret(env, "TOKEN_SECRET");
  const relaySecret = siteSecret(env, "CONSOLE_RELAY_SECRET");

  const db = options.db ??
    openLibsql({
      url: env.vars.DATABASE_URL ?? "file:.data/gatehouse.db",
      authToken: env.vars.DATABASE_AUTH_TOKEN,
    });
  await migrate(db);
  await applyUserListIndexes(db);
  await applyAuditSchema(db);
  const client = await openAppDatabase(env);
  await registerRelaySite(client, {
    id: CONSOLE_RELAY_ID,
    name: "Operator's console",
    secret: relaySecret,
    returnUrls: [`${base}/api/auth/relay/callback`],
  });
  const mailServer: MailServer = await appMailServer(env);
  const mailBase = "/api/account-docs/v2";
  const mail = new MailroomClient({
    baseUrl: `http://console.invalid${mailBase}`,
    operatorToken: siteSecret(env, "MAIL_OPERATOR_TOKEN"),
    fetch: (input, init) => mailServer.fetch(new Request(input, init)),
  });
  const sender = mailSenderFromEnv(env);
  if (!sender && production) {
    throw new Error("console: MAIL_API_KEY and MAIL_FROM must be set in production");
  }
  const sendEmail = sender ?? (await createOutbox(db)).send;
  if (!production) await ensureDevOwner(db, { tokenSecret, iterations: options.iterations });

  const services: ConsoleServices = {
    env,
    base,
    db,
    client,
    mail,
    mailBase,
    server,
    sendEmail,
    tokenSecret,
    appName: USERS_APP_NAME,
    iterations: options.iterations,
  };

  const app = new Hono<Vars>();
  app.get("/console.css", serveCss);
  app.get("/console.js", serveScript);
  mountSignIn(app as unknown as Hono, {
    env,
    base,
    db,
    session,
    owners,
    relaySecret,
    brokerPath: BROKER_PATH,
    relaySiteId: CONSOLE_RELAY_ID,
    sso,
    stateSecret: siteSecret(env, "CONSOLE_SESSION_SECRET") + "-oauth-state",
    iterations: options.iterations,
  });

  const shell = async (
    op: Operator | null,
    current?: string,
  ): Promise<ShellContext> => {
    const group = SCREENS.find((s) => s.id === current)?.group;
    const nav: NavItem[] = op
      ? SCREENS.filter((s) => s.id !== "home" && s.nav !== false && permits(op, s.permission))
        .map((s) => ({
          href: `${base}${s.path}`,
          title: s.title,
          current: s.id === current || (group !== undefined && s.group === group),
        }))
      : [];
    return {
      base,
      nav,
      who: op ? `${op.user.email} (${op.owner ? "owner" : "administrator"})` : null,
      csrf: op ? await csrfToken(secret, op.session) : "",
    };
  };

  // Everything below needs a signed-in person: a visitor goes to the sign-in page first.
  app.use("*", async (c, next) => {
    const me = await readUserSession(db, { session, request: c.req.raw });
    if (!me) {
      const url = new URL(c.req.url);
      const back = c.req.method === "GET"
        ? `&next=${encodeURIComponent(url.pathname + url.search)}`
        : "";
      return c.redirect(`${base}/login?signed_out=1${back}`, c.req.method === "GET" ? 302 : 303);
    }
    c.set("op", {
      user: me.user,
      session: me.session,
      owner: isOwner(owners, me.user.email),
      admin: me.user.isAdmin,
    });
    await next();
  });
  app.use(
    "*",
    csrfProtection({
      expected: (c) => csrfToken(secret, (c.var as { op: Operator }).op.session),
      refuse: async () =>
        pageResponse(await shell(null), {
          title: "This form could not be accepted",
          status: 403,
          error: "The form expired or did not come from this console, so nothing was changed.",
          body: h(
            "p",
            null,
            "Go back, reload the page and send the form again. ",
            h("a", { href: `${base}/` }, "Console home"),
          ),
        }),
    }),
  );

  // Sign-out ends this session in every copy of its cookie (revoked_sessions); the cookie goes
  // from this browser even when the database fails.
  app.post("/logout", async (c) => {
    await signOut(db, { session, request: c.req.raw });
    c.header("set-cookie", clearSessionCookie(session));
    return c.redirect(`${base}/login?signed_out=1`, 303);
  });

  for (const screen of SCREENS) {
    for (const route of screen.routes) {
      app.on(route.method, routePath(screen, route), async (c) => {
        const op = c.get("op");
        if (!permits(op, screen.permission)) {
          return pageResponse(await shell(op), {
            title: "You may not use this page",
            status: 403,
            error: screen.permission === "owner"
              ? "This page is for the site's owners only."
              : "The console is only for the site's owners and administrators.",
            body: h("p", null, "Nothing was changed. Ask an administrator if you need access."),
          });
        }
        const ctx = await shell(op, screen.id);
        // A change is recorded before it is made (see reserveAudit): when the audit log cannot
        // be written, nothing is changed. The handler's audit entry fills the reservation in;
        // a request that changed nothing withdraws it.
        let reservation: number | undefined;
        let audited = false;
        if (route.method === "POST") {
          const r = await reserveAudit(db, {
            actorId: op.user.id,
            actorEmail: op.user.email,
            target: `POST ${new URL(c.req.url).pathname}`.slice(0, 500),
          });
          if (!r.ok) {
            console.error(`console: the audit log cannot be written (${r.error}); change refused`);
            return pageResponse(ctx, {
              title: "Nothing was changed",
              status: 503,
              error:
                "The audit log cannot be written just now, and the console makes no change it cannot record. Nothing was changed.",
              body: h(
                "p",
                null,
                "Try again in a moment. ",
                h("a", { href: `${base}/` }, "Console home"),
              ),
            });
          }
          reservation = r.id;
        }
        const req: ConsoleRequest = {
          c,
          op,
          services,
          csrf: ctx.csrf,
          page: (page) => pageResponse(ctx, page),
          form: async () => {
            const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
            return Object.fromEntries(
              Object.entries(body).filter(([, v]) => typeof v === "string"),
            ) as Record<string, string>;
          },
          files: async () => {
            const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
            return Object.fromEntries(
              Object.entries(body).filter(([, v]) => v instanceof File),
            ) as Record<string, File>;
          },
          audit: async (entry) => {
            const r = await recordAudit(db, {
              actorId: op.user.id,
              actorEmail: op.user.email,
              action: entry.action,
              target: entry.target,
              before: await fitForAudit(entry.before),
              after: await fitForAudit(entry.after),
              reservation: audited ? undefined : reservation,
            });
            audited = true;
            // The reserved entry stays: who, when and which request, without the details.
            if (!r.ok) console.error(`console: the audit log refused an entry (${r.error})`);
          },
        };
        const res = await route.handle(req);
        // Nothing was recorded, so nothing was changed: the reservation goes. (A handler that
        // throws keeps it: whether it changed something is not known.)
        if (reservation !== undefined && !audited) await withdrawAudit(db, reservation);
        return res;
      });
    }
  }

  // The console's own 404, in its shell: a catch-all after every screen, since the app that
  // mounts the console answers unknown paths with its notFound, never with a mounted one's.
  app.all(
    "*",
    async (c) =>
      pageResponse(await shell((c.get("op") as Operator | undefined) ?? null), {
        title: "Nothing here",
        status: 404,
        error: "There is no console page at this address.",
        body: h("p", null, h("a", { href: `${base}/` }, "Go to the console home")),
      }),
  );
  return app as unknown as Hono;
}
