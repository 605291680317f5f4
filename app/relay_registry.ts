/**
 * The relay broker's registry of sites, in the app's libSQL database: each registered site has
 * an id, a name, its own relay secret (the broker signs that site's tokens with it) and the
 * exact return URLs it may be sent back to. Unregistered sites get no token; a return URL not
 * in the list gets no redirect.
 *
 * Tables (idempotent):
 * - `relay_sites(id TEXT PRIMARY KEY, name TEXT, secret TEXT, created_at INTEGER)`
 * - `relay_return_urls(site_id TEXT, url TEXT, PRIMARY KEY (site_id, url))`
 *
 * A return URL is either absolute (`https://site.example/api/auth/relay/callback`) or a path
 * (`/relay-demo/api/auth/relay/callback`), which means "on the broker's own origin". A
 * requested return URL matches only when it is the same URL exactly, without query or
 * fragment.
 *
 * @module
 */
import { type Client, createClient } from "@libsql/client";
import type { AppEnv } from "./env.ts";

/** A site registered with the broker. */
export interface RelaySite {
  /** Stable id the site sends as `site=`. */
  id: string;
  /** Display name on the broker's pages. */
  name: string;
  /** The site's `RELAY_SECRET`. */
  secret: string;
  /** Allowed return URLs (absolute, or paths on the broker's origin). */
  returnUrls: string[];
}

const SITE_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const clients = new Map<string, Client>();

/**
 * The app's database (`DATABASE_URL`, default `file:.data/gatehouse.db`), one client per URL
 * per process, with the registry tables created.
 */
export async function openAppDatabase(env: AppEnv): Promise<Client> {
  const url = env.vars.DATABASE_URL ?? "file:.data/gatehouse.db";
  let client = clients.get(url);
  if (!client) {
    if (url.startsWith("file:")) {
      const path = url.slice("file:".length);
      const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
      if (dir) await Deno.mkdir(dir, { recursive: true });
    }
    client = createClient({ url, authToken: env.vars.DATABASE_AUTH_TOKEN });
    clients.set(url, client);
  }
  await ensureRelayTables(client);
  return client;
}

/** Creates the registry tables when missing. */
export async function ensureRelayTables(db: Client): Promise<void> {
  await db.batch([
    `CREATE TABLE IF NOT EXISTS relay_sites (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      secret TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS relay_return_urls (
      site_id TEXT NOT NULL REFERENCES relay_sites(id) ON DELETE CASCADE,
      url TEXT NOT NULL,
      PRIMARY KEY (site_id, url)
    )`,
  ], "write");
}

/** Registers a site, or replaces its name, secret and return URLs. */
export async function registerRelaySite(db: Client, site: RelaySite): Promise<void> {
  if (!SITE_ID.test(site.id)) throw new TypeError(`invalid relay site id: ${site.id}`);
  if (site.secret.length < 16) throw new TypeError("a relay secret needs at least 16 characters");
  for (const url of site.returnUrls) {
    if (!url.startsWith("/") && !/^https?:\/\//.test(url)) {
      throw new TypeError(`return URL must be absolute or a path: ${url}`);
    }
  }
  await db.batch([
    {
      sql: `INSERT INTO relay_sites (id, name, secret, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET name = excluded.name, secret = excluded.secret`,
      args: [site.id, site.name, site.secret, Date.now()],
    },
    { sql: "DELETE FROM relay_return_urls WHERE site_id = ?", args: [site.id] },
    ...site.returnUrls.map((url) => ({
      sql: "INSERT INTO relay_return_urls (site_id, url) VALUES (?, ?)",
      args: [site.id, url],
    })),
  ], "write");
}

/** The registered site with this id, or null. */
export async function findRelaySite(db: Client, id: string): Promise<RelaySite | null> {
  if (!SITE_ID.test(id)) return null;
  const row =
    (await db.execute({ sql: "SELECT id, name, secret FROM relay_sites WHERE id = ?", args: [id] }))
      .rows[0];
  if (!row) return null;
  const urls = await db.execute({
    sql: "SELECT url FROM relay_return_urls WHERE site_id = ? ORDER BY url",
    args: [id],
  });
  return {
    id: String(row.id),
    name: String(row.name),
    secret: String(row.secret),
    returnUrls: urls.rows.map((r) => String(r.url)),
  };
}

/**
 * The return URL to redirect to, when `requested` is one of the site's registered URLs
 * (resolved against the broker's origin); otherwise null.
 */
export function allowedReturnUrl(
  site: RelaySite,
  requested: string,
  brokerOrigin: string,
): string | null {
  let wanted: URL;
  try {
    wanted = new URL(requested);
  } catch {
    return null;
  }
  if (wanted.search || wanted.hash || wanted.username || wanted.password) return null;
  for (const registered of site.returnUrls) {
    const allowed = new URL(registered, brokerOrigin);
    if (allowed.href === wanted.href) return allowed.href;
  }
  return null;
}
