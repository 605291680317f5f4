/**
 * Serves the hydration script of the sign-in pages: `app/client.ts` bundled for the browser
 * once per process (with `Deno.bundle` when the runtime has it, else the `deno bundle`
 * command). Where neither is available (e.g. a host
 * without subprocesses), pages are served without the script and work as plain HTML forms.
 *
 * @module
 */
import type { Context } from "hono";

/** File name under which each site serves the bundle. */
export const CLIENT_SCRIPT = "auth-client.js";

const builds = new Map<string, Promise<string | null>>();

/**
 * A browser entry bundled once per process (built on first use), or null when bundling is
 * unavailable; `what` names the pages that then go without JavaScript in the warning.
 */
export function bundleScript(entry: URL, what: string): Promise<string | null> {
  let build = builds.get(entry.href);
  if (!build) {
    build = bundle(entry).catch((e) => {
      console.warn(`${what} are served without JavaScript: ${e instanceof Error ? e.message : e}`);
      return null;
    });
    builds.set(entry.href, build);
  }
  return build;
}

/** The bundled client script (built on first use), or null when bundling is unavailable. */
export function clientBundle(): Promise<string | null> {
  return bundleScript(new URL("./client.ts", import.meta.url), "sign-in pages");
}

async function bundle(entry: URL): Promise<string> {
  const config = new URL("./deno.json", import.meta.url); // the app's own: one copy of Preact
  // deno-lint-ignore no-explicit-any
  const api = (Deno as any).bundle;
  if (typeof api === "function") {
    const result = await api({
      entrypoints: [entry.href],
      platform: "browser",
      minify: true,
      write: false,
    });
    const file = result.success ? result.outputFiles?.[0] : undefined;
    if (file) {
      return typeof file.text === "function"
        ? file.text()
        : new TextDecoder().decode(file.contents);
    }
  }
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-bundle-" });
  try {
    const out = `${dir}/client.js`;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "--minify",
        "--config",
        config.pathname,
        "-o",
        out,
        entry.pathname,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!success) {
      throw new Error(`deno bundle failed: ${new TextDecoder().decode(stderr).slice(0, 500)}`);
    }
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Route handler serving the bundle (404 when unavailable). */
export async function serveClientBundle(c: Context): Promise<Response> {
  const js = await clientBundle();
  if (js === null) return c.text("not available", 404);
  return c.body(js, 200, {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": "no-cache",
  });
}

/** File name under which the users site serves the account page's script. */
export const ACCOUNT_SCRIPT = "account-client.js";

/** The bundled account page script (built on first use), or null when bundling is unavailable. */
export function accountBundle(): Promise<string | null> {
  return bundleScript(new URL("./account_client.ts", import.meta.url), "account pages");
}
