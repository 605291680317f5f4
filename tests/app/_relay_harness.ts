/**
 * A loopback server with the development identity provider, the relay broker and two relay
 * sites (`/relay-demo` and `/relay-other`, each with its own relay secret), a controllable
 * clock, and a small cookie-keeping HTTP client for walking redirects by hand.
 */
import { Hono } from "hono";
import { type Client, createClient } from "@libsql/client";
import { createBroker } from "../../app/broker.ts";
import { createDevIdp } from "../../app/dev_idp.ts";
import { loadAppEnv } from "../../app/env.ts";
import { createRelayDemo } from "../../app/relay_demo.ts";

export interface Harness {
  origin: string;
  db: Client;
  clock: { now: number };
  close(): Promise<void>;
}

export async function startHarness(vars: Record<string, string> = {}): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-relay-" });
  const db = createClient({ url: `file:${dir}/relay.db` });
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const env = loadAppEnv({
    MODE: "development",
    // Ended sessions of the relay sites go to the toolkit's tables in the same file.
    DATABASE_URL: `file:${dir}/relay.db`,
    RELAY_DEMO_RELAY_SECRET: "relay-demo-secret-0123456789",
    RELAY_OTHER_RELAY_SECRET: "relay-other-secret-0123456789",
    ...vars,
  });
  const app = new Hono();
  app.route("/dev-idp", createDevIdp());
  app.route("/broker", await createBroker({ env, db, now }));
  app.route("/relay-demo", await createRelayDemo({ env, db, now }));
  app.route(
    "/relay-other",
    await createRelayDemo({
      env,
      db,
      now,
      basePath: "/relay-other",
      siteId: "relay-other",
      varPrefix: "RELAY_OTHER_",
    }),
  );
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    db,
    clock,
    async close() {
      await server.shutdown();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A browser-like client: keeps cookies (all Path=/), never follows redirects by itself. */
export class Browser {
  cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  async get(url: string): Promise<{ status: number; location: string | null; body: string }> {
    return await this.send(url, { method: "GET" });
  }

  async post(url: string, form: Record<string, string>) {
    return await this.send(url, { method: "POST", body: new URLSearchParams(form) });
  }

  async send(url: string, init: RequestInit) {
    const target = new URL(url, this.origin);
    const headers = new Headers(init.headers);
    if (this.cookies.size) {
      headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const res = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attrs.some((a) => a.trim().toLowerCase() === "max-age=0") || value === "") {
        this.cookies.delete(name);
      } else this.cookies.set(name, value);
    }
    const location = res.headers.get("location");
    return {
      status: res.status,
      location: location === null ? null : new URL(location, target).href,
      body: await res.text(),
    };
  }
}

/** Consents at the development provider's authorize page; returns the redirect back. */
export async function consent(
  b: Browser,
  authorizeUrl: string,
  email: string,
  decision: "allow" | "deny" = "allow",
): Promise<string> {
  const q = new URL(authorizeUrl).searchParams;
  const res = await b.post(authorizeUrl, {
    client_id: q.get("client_id") ?? "",
    redirect_uri: q.get("redirect_uri") ?? "",
    state: q.get("state") ?? "",
    code_challenge: q.get("code_challenge") ?? "",
    code_challenge_method: q.get("code_challenge_method") ?? "",
    email,
    name: "Test Person",
    verified: "1",
    decision,
  });
  if (res.status !== 302 || !res.location) {
    throw new Error(`consent failed: ${res.status} ${res.body}`);
  }
  return res.location;
}

/**
 * Walks the relay from the broker's start URL to the site's return URL with the token (the
 * step the browser would do next is returned, not taken).
 */
export async function throughBroker(
  b: Browser,
  brokerStart: string,
  email: string,
): Promise<string> {
  const start = await b.get(brokerStart);
  if (start.status !== 302 || !start.location) {
    throw new Error(`broker start: ${start.status} ${start.body}`);
  }
  const back = await consent(b, start.location, email);
  const callback = await b.get(back);
  if (callback.status !== 302 || !callback.location) {
    throw new Error(`broker callback: ${callback.status}`);
  }
  return callback.location;
}
