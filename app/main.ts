/**
 * The reference app: one Hono app on one port that mounts the demo sites under path prefixes
 * (`/owner`, ...), each a self-contained site with its own cookies and secrets, plus the APIs.
 * `deno task start` runs it; see README.md for the variables it reads.
 *
 * @module
 */
import { Hono } from "hono";
import { loadAppEnv } from "./env.ts";
import { sites } from "./sites.ts";
import { allowedHosts } from "./middleware/hosts.ts";
import { bodyLimits, FORM_BODY_LIMIT } from "./middleware/body_limit.ts";
import { refuseCrossSite } from "./middleware/cross_site.ts";
import { securityHeaders } from "./middleware/security_headers.ts";
import { startBanner } from "./banner.ts";
import { checkProductionEnv } from "./required_env.ts";
import { serveFavicon } from "./favicon.ts";
import { sitePage } from "./site_page.ts";
import { h } from "preact";
import { guardInspectorSignal } from "../mail.ts";

/** Builds the whole reference app from its environment. */
export async function createApp(env = loadAppEnv()): Promise<Hono> {
  // Not strict: "/owner" and "/owner/" reach the same site root.
  const app = new Hono({ strict: false });
  // Order: headers on every answer (refusals included), then the host check, the cross-site
  // refusal and the body limit, all before any site's route.
  app.use("*", securityHeaders());
  app.use("*", allowedHosts(env));
  app.use("*", refuseCrossSite(env));
  app.use(
    "*",
    bodyLimits(sites.map((s) => ({ path: s.path, limit: s.bodyLimit })), FORM_BODY_LIMIT),
  );
  const mounted: { path: string; title: string }[] = [];
  for (const site of sites) {
    app.route(site.path, await site.create(env));
    mounted.push({ path: site.path, title: site.title });
  }
  // Unknown paths: a page in the app's look for a browser, Hono's plain words for the others
  app.notFound((c) =>
    (c.req.header("accept") ?? "").includes("text/html")
      ? c.html(
        sitePage({
          site: "Gatehouse demo",
          home: "/",
          title: "Page not found",
          lead: `Nothing is at ${new URL(c.req.url).pathname}.`,
          body: h(
            "ul",
            { class: "card" },
            mounted.map((m) => h("li", { key: m.path }, h("a", { href: `${m.path}/` }, m.title))),
          ),
        }),
        404,
      )
      : c.text("404 Not Found", 404)
  );
  app.get("/favicon.svg", serveFavicon);
  app.get("/favicon.ico", serveFavicon);
  app.get("/", (c) =>
    c.html(sitePage({
      site: "Gatehouse demo",
      home: "/",
      title: "Gatehouse demo",
      lead: "Sites built with the Gatehouse toolkit, mounted side by side on one app.",
      body: h(
        "ul",
        { class: "card" },
        mounted.map((m) => h("li", { key: m.path }, h("a", { href: `${m.path}/` }, m.title))),
      ),
    })));
  return app;
}

/** Starts the app as `deno task start` does; exits 1 with the reasons, never a stack trace. */
async function main(): Promise<void> {
  // SIGUSR1 must not open Deno's inspector (docs/security.md); Deno Deploy sends no signals
  if (!Deno.env.get("DENO_DEPLOYMENT_ID")) guardInspectorSignal();
  const vars = Deno.env.toObject();
  const production = (vars.MODE?.trim() || (vars.DENO_DEPLOYMENT_ID ? "production" : "")) ===
    "production";
  if (production) {
    const problems = checkProductionEnv(vars);
    if (problems.length) {
      console.error(
        `Gatehouse demo cannot start in production: ${problems.length} ` +
          `${problems.length === 1 ? "variable needs" : "variables need"} attention ` +
          "(see .env.example):",
      );
      for (const p of problems) console.error(`  - ${p}`);
      Deno.exit(1);
    }
  }
  let env;
  try {
    env = loadAppEnv(vars);
  } catch (e) {
    console.error(`Gatehouse demo cannot start: ${(e as Error).message}`);
    Deno.exit(1);
  }
  let app: Hono;
  try {
    app = await createApp(env);
  } catch (e) {
    console.error(`Gatehouse demo cannot start: ${(e as Error).message}`);
    Deno.exit(1);
  }
  const server = Deno.serve({ hostname: env.HOST, port: env.PORT, onListen: () => {} }, app.fetch);
  const origin = `http://${server.addr.hostname}:${server.addr.port}`;
  const mounted = sites.map((s) => ({ path: s.path, title: s.title }));
  for (const line of await startBanner(env, origin, mounted)) console.log(line);
}

if (import.meta.main) await main();
