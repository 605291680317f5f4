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
import { mailSandboxLines } from "./mail.ts";

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
  app.get("/", (c) =>
    c.html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Gatehouse demo</title>` +
        `<meta name="viewport" content="width=device-width, initial-scale=1"></head>` +
        `<body style="font-family:system-ui;max-width:40rem;margin:3rem auto"><h1>Gatehouse demo</h1><ul>` +
        mounted.map((m) => `<li><a href="${m.path}/">${m.title}</a></li>`).join("") +
        `</ul></body></html>`,
    ));
  return app;
}

if (import.meta.main) {
  const env = loadAppEnv();
  const app = await createApp(env);
  const server = Deno.serve({
    hostname: env.HOST,
    port: env.PORT,
    onListen: () => {},
  }, app.fetch);
  const origin = `http://${server.addr.hostname}:${server.addr.port}`;
  // the mail API's sandbox key first, so the "listening" line ends the start-up output
  for (const line of await mailSandboxLines(env, origin)) console.log(line);
  console.log(`Gatehouse demo listening on ${origin}/`);
}
