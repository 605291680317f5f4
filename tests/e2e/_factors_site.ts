/**
 * The multi-user site for the passkey, second-factor and sessions tests, on either database:
 * the whole reference app on libSQL (`startApp`), or the users site alone on Cloudflare's D1
 * through Miniflare, behind the app's own middleware. The browser reaches it as
 * `http://localhost:<port>` (WebAuthn refuses IP addresses as RP IDs, and treats localhost as
 * a secure context); Deno's own requests (the outbox) go to `127.0.0.1`.
 *
 * The test reaches the site's database too (`db`), and can sign a browser in with a session
 * made at another time (`sessionAt`), as the site would have made it then.
 *
 * Also the Chrome DevTools Protocol's virtual authenticator for a page.
 */
import { Hono } from "hono";
import { Miniflare } from "miniflare";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import {
  createUserSession,
  type D1Database,
  type LibsqlDatabase,
  migrate,
  openLibsql,
} from "../../d1.ts";
import { loadAppEnv } from "../../app/env.ts";
import { siteSecret } from "../../app/dev_secret.ts";
import { createUsersSite } from "../../app/users.ts";
import { securityHeaders } from "../../app/middleware/security_headers.ts";
import { allowedHosts } from "../../app/middleware/hosts.ts";
import { refuseCrossSite } from "../../app/middleware/cross_site.ts";
import { startApp } from "./_harness.ts";

/** The databases the site runs on. */
export type Backend = "libsql" | "d1";

/** A running site. */
export interface FactorsSite {
  /** The browser's origin (`http://localhost:<port>`). */
  origin: string;
  /** The same server for Deno's requests (`http://127.0.0.1:<port>`). */
  direct: string;
  /** The site's database. */
  db: D1Database;
  /**
   * The `Cookie` of a recorded session of `userId` made at `now` (ms since the epoch), as the
   * site signs its sessions, for a browser's `addCookies`.
   */
  sessionAt(userId: string, now: number): Promise<{ name: string; value: string }>;
  close(): Promise<void>;
}

/** The users site's session settings in development (`app/users.ts`). */
const SESSION = {
  secret: siteSecret(loadAppEnv({ MODE: "development" }), "USERS_SESSION_SECRET"),
  cookieName: "__Host-users-session",
};

function sessionMaker(db: D1Database): FactorsSite["sessionAt"] {
  return async (userId, now) => {
    const s = await createUserSession(db, {
      session: SESSION,
      userId,
      record: { userAgent: "an older browser" },
      now,
    });
    if (!s.ok) throw new Error(`no session: ${s.error}`);
    const [name, ...value] = s.setCookie.split(";")[0].split("=");
    return { name, value: value.join("=") };
  };
}

/** Starts the site on `backend`; `vars` add to its development environment. */
export async function startFactorsSite(
  backend: Backend,
  vars: Record<string, string> = {},
): Promise<FactorsSite> {
  if (backend === "libsql") {
    const app = await startApp(vars);
    const db: LibsqlDatabase = openLibsql(app.databaseUrl);
    return {
      origin: app.origin.replace("127.0.0.1", "localhost"),
      direct: app.origin,
      db,
      sessionAt: sessionMaker(db),
      async close() {
        db.close();
        await app.close();
      },
    };
  }
  const mf = new Miniflare({
    modules: true,
    script: "export default {fetch(){return new Response()}}",
    d1Databases: ["DB"],
  });
  const db: D1Database = await mf.getD1Database("DB");
  await migrate(db);
  const env = loadAppEnv({ MODE: "development", ...vars });
  const app = new Hono({ strict: false });
  app.use("*", securityHeaders());
  app.use("*", allowedHosts(env));
  app.use("*", refuseCrossSite(env));
  app.route("/users", await createUsersSite({ env, db, iterations: 1000 }));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const port = server.addr.port;
  return {
    origin: `http://localhost:${port}`,
    direct: `http://127.0.0.1:${port}`,
    db,
    sessionAt: sessionMaker(db),
    async close() {
      await server.shutdown();
      await mf.dispose();
    },
  };
}

/** A virtual authenticator attached to a page (its tab), with resident keys and UV. */
export interface VirtualAuthenticator {
  cdp: CDPSession;
  id: string;
  /** The credentials it holds. */
  credentials(): Promise<
    { credentialId: string; isResidentCredential: boolean; rpId?: string; signCount: number }[]
  >;
}

/**
 * `WebAuthn.enable`, then `WebAuthn.addVirtualAuthenticator`: a platform authenticator (CTAP
 * 2.1, internal transport) with resident keys and user verification, the user verified and
 * present (it answers at once).
 */
export async function virtualAuthenticator(page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      ctap2Version: "ctap2_1",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    cdp,
    id: authenticatorId,
    async credentials() {
      const r = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      return r.credentials;
    },
  };
}

/** A fresh browser profile at desktop width (1280 px; `checkPage` then checks 390 px too). */
export function desktop(browser: Browser, javaScriptEnabled: boolean): Promise<BrowserContext> {
  return browser.newContext({ javaScriptEnabled, viewport: { width: 1280, height: 900 } });
}
