/**
 * The console's static files: its stylesheet, its browser script (bundled from `client.ts`
 * on first use; without a bundler the pages work without it) and nothing else.
 *
 * @module
 */
import type { Context } from "hono";
import { bundleScript } from "../client_bundle.ts";
import { APP_CSS } from "../style.ts";

/** `GET <console>/console.css`. */
export function serveCss(c: Context): Response {
  return c.body(APP_CSS, 200, {
    "content-type": "text/css; charset=utf-8",
    "cache-control": "no-cache",
  });
}

/** `GET <console>/console.js` (404 when bundling is unavailable). */
export async function serveScript(c: Context): Promise<Response> {
  const js = await bundleScript(new URL("./client.ts", import.meta.url), "console pages");
  if (js === null) return c.text("not available", 404);
  return c.body(js, 200, {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": "no-cache",
  });
}
