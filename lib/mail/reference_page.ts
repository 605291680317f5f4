/**
 * The interactive API reference at `<base>/docs`: the OpenAPI document rendered by Scalar's
 * API reference (npm `@scalar/api-reference`), every asset served by this server, so the page
 * works with no internet access and under a strict Content-Security-Policy (no inline script,
 * no external origin): the page loads `<base>/docs/assets/reference.js` (Scalar's standalone
 * bundle: the copy the npm mirror carries, or the one of the installed npm package) and
 * `<base>/docs/assets/init.js` (ours), which
 * reads its settings from a JSON block of the page. Scalar's telemetry, default fonts, request
 * proxy and AI agent are turned off; "try it" sends requests straight to this server. Where the
 * renderer cannot be found, `reference.js` answers 503 with what to do on this runtime (Node:
 * npm install; Deno: `deno install`, or a node_modules directory first).
 *
 * @module
 */
import { Hono } from "hono";
import { MailServerError } from "./errors.ts";
import type { MailEnv } from "./context.ts";

/** Settings the page hands the renderer (read by `init.js` from the page). */
interface ReferenceSettings {
  url: string;
  title: string;
}

const INIT_JS = `// Gatehouse mail API reference: starts Scalar with the page's settings.
(function () {
  var el = document.getElementById("gatehouse-reference-settings");
  var settings = JSON.parse(el.textContent);
  Scalar.createApiReference("#app", {
    url: settings.url,
    pageTitle: settings.title,
    telemetry: false,
    withDefaultFonts: false,
    hideClientButton: false,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    proxyUrl: "",
    persistAuth: false,
    defaultOpenAllTags: true,
    authentication: { preferredSecurityScheme: "apiKey" },
  });
})();
`;

/**
 * Where the npm mirror carries the renderer's bundle, beside this module (`scripts/build_npm.ts`
 * copies it there with its licence, so an npm install serves the reference with no further
 * package).
 */
const CARRIED = "./scalar/standalone.js";

/** The renderer's bundle, or why it cannot be read (the words of the 503 answer). */
type Bundle = { bytes: Uint8Array } | { missing: string };

let bundle: Promise<Bundle> | null = null;

const isDeno = () => typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

async function readFileUrl(url: URL): Promise<Uint8Array> {
  const { readFile } = await import("node:fs/promises");
  return new Uint8Array(await readFile(url));
}

/** What to do, on this runtime, when the renderer cannot be found. */
function installAdvice(resolved: string | null): string {
  if (!isDeno()) {
    return "install it (`npm install @scalar/api-reference`, or your package manager's " +
      "equivalent) beside this package, then restart";
  }
  if (resolved !== null && !resolved.startsWith("file:")) {
    // Deno without a node_modules directory: npm packages live in its global cache, where a
    // module cannot read a package's files
    return 'Deno reads its browser bundle from a node_modules directory: set "nodeModulesDir": ' +
      '"auto" in deno.json and add it (`deno add npm:@scalar/api-reference`), then restart';
  }
  return "run `deno install` (it installs the project's npm packages, this one among them), " +
    "then restart";
}

/**
 * Scalar's standalone browser bundle: the copy the npm mirror carries beside this module,
 * else the one in the installed npm package `@scalar/api-reference` (read from its
 * node_modules directory), else why neither is there.
 */
async function findBundle(): Promise<Bundle> {
  const here = new URL(import.meta.url);
  if (here.protocol === "file:") {
    try {
      return { bytes: await readFileUrl(new URL(CARRIED, here)) };
    } catch { /* not the npm mirror: the installed package below */ }
  }
  let resolved: string | null = null;
  try {
    resolved = import.meta.resolve("@scalar/api-reference/style.css");
    if (resolved.startsWith("file:")) {
      return { bytes: await readFileUrl(new URL("./browser/standalone.js", resolved)) };
    }
  } catch (err) {
    console.error(
      "mail api: the API reference renderer (npm @scalar/api-reference) is not installed:",
      (err as Error).message,
    );
  }
  return {
    missing: "The API reference renderer (npm @scalar/api-reference) is not installed: " +
      `${installAdvice(resolved)}.`,
  };
}

/** The bundle, read once; a missing one is looked for again on the next request. */
function loadBundle(): Promise<Bundle> {
  const attempt = bundle ?? findBundle();
  bundle = attempt;
  attempt.then((found) => {
    if ("missing" in found && bundle === attempt) bundle = null;
  });
  return attempt;
}

function escapeHtml(s: string): string {
  return s.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The page: no inline script; the settings are a JSON data block. */
function page(basePath: string): string {
  const settings: ReferenceSettings = {
    url: `${basePath}/openapi.json`,
    title: "Mail-scanning API reference",
  };
  // "<" is escaped so the JSON cannot close its element.
  const json = JSON.stringify(settings).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(settings.title)}</title>
</head>
<body>
<noscript>The interactive reference needs JavaScript. The OpenAPI document is at
<a href="${escapeHtml(settings.url)}">${escapeHtml(settings.url)}</a>.</noscript>
<div id="app"></div>
<script type="application/json" id="gatehouse-reference-settings">${json}</script>
<script src="${escapeHtml(basePath)}/docs/assets/reference.js"></script>
<script src="${escapeHtml(basePath)}/docs/assets/init.js"></script>
</body>
</html>
`;
}

/** Routes under `/docs`: the page and its two scripts (no API key needed). */
export function referenceRouter(basePath: string): Hono<MailEnv> {
  const app = new Hono<MailEnv>();
  const html = page(basePath);
  app.get("/", (c) => c.html(html, 200, { "cache-control": "no-cache" }));
  app.get("/assets/:file", async (c) => {
    const file = c.req.param("file");
    if (file === "init.js") {
      return c.body(INIT_JS, 200, {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": "no-cache",
      });
    }
    if (file !== "reference.js") {
      throw new MailServerError(
        9404,
        `No such endpoint: the reference's scripts are ${basePath}/docs/assets/reference.js ` +
          "and init.js.",
      );
    }
    const found = await loadBundle();
    if ("missing" in found) {
      return c.text(
        `${found.missing} The OpenAPI document is served at ${basePath}/openapi.json.`,
        503,
      );
    }
    return c.body(found.bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=3600",
    });
  });
  return app;
}
