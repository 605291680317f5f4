/**
 * The interactive API reference at `<base>/docs`: the OpenAPI document rendered by Scalar's
 * API reference (npm `@scalar/api-reference`), every asset served by this server, so the page
 * works with no internet access and under a strict Content-Security-Policy (no inline script,
 * no external origin): the page loads `<base>/docs/assets/reference.js` (Scalar's standalone
 * bundle, read from the installed npm package) and `<base>/docs/assets/init.js` (ours), which
 * reads its settings from a JSON block of the page. Scalar's telemetry, default fonts, request
 * proxy and AI agent are turned off; "try it" sends requests straight to this server.
 *
 * @module
 */
import { Hono } from "hono";
import { MailServerError } from "./errors.ts";
import type { MailEnv } from "./server.ts";

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

let bundle: Promise<Uint8Array | null> | null = null;

/**
 * Scalar's standalone browser bundle from the installed npm package, or null when the package
 * is not installed (`deno install` installs it with the project).
 */
function loadBundle(): Promise<Uint8Array | null> {
  bundle ??= (async () => {
    try {
      const css = import.meta.resolve("@scalar/api-reference/style.css");
      const url = new URL("./browser/standalone.js", css);
      const { readFile } = await import("node:fs/promises");
      return new Uint8Array(await readFile(url));
    } catch (err) {
      console.error(
        "mail api: the API reference renderer (npm @scalar/api-reference) is not installed:",
        (err as Error).message,
      );
      bundle = null;
      return null;
    }
  })();
  return bundle;
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
    const bytes = await loadBundle();
    if (!bytes) {
      return c.text(
        "The API reference renderer is not installed: run `deno install` (it installs npm " +
          "@scalar/api-reference). The OpenAPI document is served at " +
          `${basePath}/openapi.json.`,
        503,
      );
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=3600",
    });
  });
  return app;
}
