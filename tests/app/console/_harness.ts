/**
 * The console's test harness: the whole reference app (`createApp`) on a loopback port with a
 * temp libSQL database; a real Gatehouse server process (`deno run -A cli.ts run`) with its
 * admin endpoint and a reverse proxy to a loopback upstream; accounts made through the `/d1`
 * flows; and a cookie-keeping client that signs in to the console.
 */
import { createApp } from "../../../app/main.ts";
import { loadAppEnv } from "../../../app/env.ts";
import {
  type D1Database,
  type EmailMessage,
  type LibsqlDatabase,
  listAudit,
  openLibsql,
  setAdmin,
  signup,
  verifyOtp,
} from "../../../d1.ts";
import { Browser } from "../_relay_harness.ts";
import { freePort, spawnCli, tempEnv, until } from "../../server/fixtures/helpers.ts";

export { Browser };

/** The development TOKEN_SECRET default (what the users site and the console use). */
export const DEV_TOKEN_SECRET = "development-only-token_secret-do-not-use-in-production";
/** The development owner's login. */
export const OWNER = { email: "owner@example.com", password: "owner-password" };

export interface ConsoleApp {
  origin: string;
  dir: string;
  /** The app's database, for checks and for making accounts. */
  db: LibsqlDatabase;
  close(): Promise<void>;
}

/** The app in development mode with a fresh database; `vars` add to its environment. */
export async function startConsoleApp(vars: Record<string, string> = {}): Promise<ConsoleApp> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-console-" });
  const app = await createApp(loadAppEnv({
    MODE: "development",
    DATABASE_URL: `file:${dir}/app.db`,
    MAIL_BLOB_DIR: `${dir}/blobs`,
    GATEHOUSE_ADMIN: "127.0.0.1:1",
    // the tests' webhook receivers listen on loopback: allowed as an operator would allow them
    MAIL_WEBHOOK_ALLOW: "127.0.0.1",
    ...vars,
  }));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const db = openLibsql({ url: `file:${dir}/app.db` });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    dir,
    db,
    async close() {
      await server.shutdown();
      db.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A verified account made through signup and verification; optionally an administrator. */
export async function makeUser(
  db: D1Database,
  email: string,
  o: { admin?: boolean; password?: string } = {},
): Promise<string> {
  const sent: EmailMessage[] = [];
  const password = o.password ?? "correct horse battery staple";
  const s = await signup(db, {
    email,
    password,
    secret: DEV_TOKEN_SECRET,
    sendEmail: (m) => void sent.push(m),
    iterations: 1000,
  });
  if (!s.ok) throw new Error(`signup ${email}: ${s.error}`);
  const code = sent[0].text.match(/\b(\d{6})\b/)![1];
  const v = await verifyOtp(db, { email, code, attempt: s.attempt, secret: DEV_TOKEN_SECRET });
  if (!v.ok) throw new Error(`verify ${email}: ${v.error}`);
  if (o.admin) {
    const a = await setAdmin(db, { userId: v.userId, admin: true });
    if (!a.ok) throw new Error(a.error);
  }
  return v.userId;
}

/** Signs in to the console with a password (a form post, as with JavaScript off). */
export async function signIn(
  origin: string,
  email: string,
  password = "correct horse battery staple",
): Promise<Browser> {
  const b = new Browser(origin);
  const r = await b.send("/admin/api/auth/login", {
    method: "POST",
    headers: { accept: "text/html", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ email, password }),
  });
  if (r.status !== 303 || !r.location?.endsWith("/admin/")) {
    throw new Error(
      `sign-in of ${email} answered ${r.status} ${r.location}: ${r.body.slice(0, 300)}`,
    );
  }
  return b;
}

/** The CSRF token in a console page. */
export function csrfIn(html: string): string {
  const m = html.match(/name="_csrf" value="([^"]+)"/);
  if (!m) throw new Error("no CSRF token in the page");
  return m[1];
}

/** A form post from a console page (same origin, CSRF token of `page`). */
export async function post(
  b: Browser,
  path: string,
  page: string,
  form: Record<string, string> = {},
): Promise<{ status: number; location: string | null; body: string }> {
  return await b.send(path, {
    method: "POST",
    headers: { accept: "text/html", "sec-fetch-site": "same-origin" },
    body: new URLSearchParams({ _csrf: csrfIn(page), ...form }),
  });
}

/** How many entries the audit log holds. */
export async function auditCount(db: D1Database): Promise<number> {
  let n = 0;
  let before: number | undefined;
  for (;;) {
    const page = await listAudit(db, { limit: 200, before });
    if (!page.ok) throw new Error(page.error);
    n += page.entries.length;
    if (!page.next) return n;
    before = page.next;
  }
}

/** The text of a page without its tags. */
export function textOf(html: string): string {
  return html.replace(/<[^>]+>/g, " ").replace(/&#x27;|&#39;/g, "'").replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&").replace(/\s+/g, " ");
}

export interface Gatehouse {
  /** The admin address (`127.0.0.1:<port>`), for GATEHOUSE_ADMIN. */
  admin: string;
  /** The admin endpoint's URL. */
  adminUrl: string;
  /** The proxy's listen port. */
  proxyPort: number;
  /** The upstream's dial address. */
  upstream: string;
  close(): Promise<void>;
}

/**
 * A Gatehouse server process: admin endpoint on a free port, and a server `srv0` whose only
 * route reverse-proxies to a loopback upstream that answers "hello from upstream".
 */
export async function startGatehouse(): Promise<Gatehouse> {
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("hello from upstream"),
  );
  const upstreamAddr = `127.0.0.1:${upstream.addr.port}`;
  const { dir, env } = await tempEnv();
  const adminPort = freePort();
  const proxyPort = freePort();
  const config = {
    admin: { listen: `127.0.0.1:${adminPort}` },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${proxyPort}`],
            automatic_https: { disable: true },
            routes: [{
              "@id": "proxy",
              handle: [{ handler: "reverse_proxy", upstreams: [{ dial: upstreamAddr }] }],
            }],
          },
        },
      },
    },
  };
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
  const proc = spawnCli(["run", "--config", `${dir}/config.json`], env, dir);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  try {
    await until(
      async () => {
        const r = await fetch(`${adminUrl}/config/`);
        await r.body?.cancel();
        return r.ok;
      },
      60_000,
      `the Gatehouse admin endpoint (output: ${proc.output().slice(0, 500)})`,
    );
  } catch (e) {
    try {
      proc.child.kill("SIGKILL");
    } catch { /* exited */ }
    await proc.status;
    await upstream.shutdown();
    throw e;
  }
  return {
    admin: `127.0.0.1:${adminPort}`,
    adminUrl,
    proxyPort,
    upstream: upstreamAddr,
    async close() {
      try {
        proc.child.kill("SIGTERM");
      } catch { /* exited */ }
      await proc.status;
      await upstream.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Adds `n` verified accounts in one go (a test fixture: rows as the flows write them, without
 * passwords, e-mails `user-00001@seed.example` ...; every 7th has a name). Returns nothing.
 */
export async function seedUsers(db: D1Database, n: number, prefix = "user"): Promise<void> {
  const now = Date.now();
  for (let start = 0; start < n; start += 1000) {
    const rows = [];
    for (let i = start; i < Math.min(n, start + 1000); i++) {
      const num = String(i).padStart(5, "0");
      rows.push(
        db.prepare(
          `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at,
           updated_at, name, is_admin) VALUES (?, ?, NULL, 1, ?, ?, ?, ?, 0)`,
        ).bind(
          crypto.randomUUID(),
          `${prefix}-${num}@seed.example`,
          crypto.randomUUID(),
          now - i * 60_000,
          now,
          i % 7 === 0 ? `Seeded Person ${num}` : null,
        ),
      );
    }
    await db.batch(rows);
  }
}

/** The newest development outbox message to `to`. */
export async function lastMail(
  db: D1Database,
  to: string,
): Promise<{ subject: string; text: string } | null> {
  return await db.prepare(
    "SELECT subject, text FROM dev_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1",
  ).bind(to).first<{ subject: string; text: string }>();
}
