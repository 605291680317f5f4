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
import { preparePrivateLibsqlFile } from "../mail.ts";

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

/** What a site id looks like: lower-case letters, digits, `-` and `_`, 1 to 63 characters. */
export const SITE_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Most return URLs of one site. */
export const MAX_RETURN_URLS = 20;
/** Shortest relay secret. */
export const MIN_RELAY_SECRET = 16;

/**
 * Why a return URL cannot be registered, in words, or null when it can. The broker sends a
 * browser back only to a URL equal to a registered one, without query or fragment, so those
 * (and credentials, other schemes, `//host` paths) could never match and are refused here.
 *
 * @example
 * ```ts
 * import { returnUrlProblem } from "./relay_registry.ts";
 * returnUrlProblem("/relay-demo/api/auth/relay/callback"); // null
 * returnUrlProblem("https://site.example/cb?x=1"); // "... no query ..."
 * ```
 */
export function returnUrlProblem(url: string): string | null {
  if (url.length === 0 || url.length > 2000) return "A return URL has 1 to 2000 characters.";
  if (/[\s\\]/.test(url)) return `${url}: a return URL has no spaces or backslashes.`;
  const path = url.startsWith("/");
  if (path && url.startsWith("//")) {
    return `${url}: a path starts with one slash (two would name another host).`;
  }
  if (!path && !/^https?:\/\//i.test(url)) {
    return `${url}: give an absolute http(s) URL or a path on the broker's origin (/...).`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url, "http://broker.invalid");
  } catch {
    return `${url} is not a URL.`;
  }
  if (parsed.search || url.includes("?")) return `${url}: a return URL has no query (?...).`;
  if (parsed.hash || url.includes("#")) return `${url}: a return URL has no fragment (#...).`;
  if (parsed.username || parsed.password) return `${url}: a return URL has no user or password.`;
  return null;
}

/** A new random relay secret (32 bytes, base64url). */
export function newRelaySecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

const clients = new Map<string, Client>();

/**
 * The app's database (`DATABASE_URL`, default `file:.data/gatehouse.db`), one client per URL
 * per process, with the registry tables created.
 */
export async function openAppDatabase(env: AppEnv): Promise<Client> {
  const url = env.vars.DATABASE_URL ?? "file:.data/gatehouse.db";
  let client = clients.get(url);
  if (!client) {
    await preparePrivateLibsqlFile(url); // 0600 (and its -wal, -shm), new directories 0700
    // `timeout`: how long a file: database waits for another process's write lock
    client = createClient({ url, authToken: env.vars.DATABASE_AUTH_TOKEN, timeout: 5_000 });
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
  if (site.secret.length < MIN_RELAY_SECRET) {
    throw new TypeError(`a relay secret needs at least ${MIN_RELAY_SECRET} characters`);
  }
  checkReturnUrls(site.returnUrls);
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

function checkReturnUrls(urls: string[]): void {
  if (urls.length === 0 || urls.length > MAX_RETURN_URLS) {
    throw new TypeError(`a site has 1 to ${MAX_RETURN_URLS} return URLs`);
  }
  for (const url of urls) {
    const problem = returnUrlProblem(url);
    if (problem) throw new TypeError(problem);
  }
}

/** A registered site as lists show it: never its secret. */
export interface RelaySiteSummary {
  /** Site id. */
  id: string;
  /** Display name. */
  name: string;
  /** Allowed return URLs. */
  returnUrls: string[];
  /** Registration time, milliseconds since the epoch. */
  createdAt: number;
}

/** Every registered site, by id, without secrets. */
export async function listRelaySites(db: Client): Promise<RelaySiteSummary[]> {
  const [sites, urls] = await db.batch([
    "SELECT id, name, created_at FROM relay_sites ORDER BY id",
    "SELECT site_id, url FROM relay_return_urls ORDER BY site_id, url",
  ], "read");
  const bySite = new Map<string, string[]>();
  for (const r of urls.rows) {
    const list = bySite.get(String(r.site_id)) ?? [];
    list.push(String(r.url));
    bySite.set(String(r.site_id), list);
  }
  return sites.rows.map((r) => ({
    id: String(r.id),
    name: String(r.name),
    returnUrls: bySite.get(String(r.id)) ?? [],
    createdAt: Number(r.created_at),
  }));
}

/**
 * Changes a site's name and return URLs, keeping its secret. Resolves to false when no such
 * site exists; throws a `TypeError` naming the problem for a return URL the broker could
 * never use.
 */
export async function updateRelaySite(
  db: Client,
  id: string,
  change: { name: string; returnUrls: string[] },
): Promise<boolean> {
  checkReturnUrls(change.returnUrls);
  const [updated] = await db.batch([
    { sql: "UPDATE relay_sites SET name = ? WHERE id = ?", args: [change.name, id] },
    {
      sql: "DELETE FROM relay_return_urls WHERE site_id = ? AND EXISTS " +
        "(SELECT 1 FROM relay_sites WHERE id = ?)",
      args: [id, id],
    },
    ...change.returnUrls.map((url) => ({
      sql: "INSERT INTO relay_return_urls (site_id, url) SELECT ?, ? WHERE EXISTS " +
        "(SELECT 1 FROM relay_sites WHERE id = ?)",
      args: [id, url, id],
    })),
  ], "write");
  return updated.rowsAffected === 1;
}

/**
 * Gives a site a new random relay secret and resolves to it (null when there is no such
 * site). Tokens signed with the old secret stop verifying at the site once it uses the new
 * one; the broker signs with the new one at once.
 */
export async function rotateRelaySecret(db: Client, id: string): Promise<string | null> {
  const secret = newRelaySecret();
  const r = await db.execute({
    sql: "UPDATE relay_sites SET secret = ? WHERE id = ?",
    args: [secret, id],
  });
  return r.rowsAffected === 1 ? secret : null;
}

/** Removes a site and its return URLs; resolves to false when there was none. */
export async function removeRelaySite(db: Client, id: string): Promise<boolean> {
  const [, removed] = await db.batch([
    { sql: "DELETE FROM relay_return_urls WHERE site_id = ?", args: [id] },
    { sql: "DELETE FROM relay_sites WHERE id = ?", args: [id] },
  ], "write");
  return removed.rowsAffected === 1;
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
