/**
 * The interactive API reference at `<base>/docs`: the OpenAPI document rendered by Scalar's
 * API reference (npm `@scalar/api-reference`), every asset served by this server, so the page
 * works with no internet access and under a strict Content-Security-Policy (no inline script,
 * no external origin): the page loads `<base>/docs/assets/reference.js` (Scalar's standalone
 * bundle) and `<base>/docs/assets/init.js` (ours), which reads its settings from a JSON block of
 * the page. Scalar's telemetry, default fonts, request proxy and AI agent are turned off; "try
 * it" sends requests straight to this server; the key field shows `gh_test_…`, the form of this
 * API's keys, instead of Scalar's key-like placeholder.
 *
 * The bundle is a file of this package, `scalar/standalone.js.gz` beside this module (written
 * by `scripts/reference_bundle.ts`, with its licence): nothing is installed for it, on any
 * runtime. It is read once (from disk, or fetched beside the module when the package is served
 * over HTTPS, as JSR does), then sent gzip-compressed as it is stored (1.26 MB for 4.35 MB of
 * script) to clients that accept gzip, decompressed once for the others, with an `ETag` and
 * `Cache-Control: public, max-age=86400` (a `304` for a matching `If-None-Match`). Where the file
 * cannot be read, `reference.js` answers 503 saying so.
 *
 * @module
 */
import { type Context, Hono } from "hono";
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
  // Scalar's own placeholder for a token looks like a real key: show the form of this API's
  var theirs = "QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT";
  var ours = "gh_test_\u2026";
  var mark = function () {
    var found = document.querySelectorAll('input[placeholder="' + theirs + '"]');
    for (var i = 0; i < found.length; i++) found[i].setAttribute("placeholder", ours);
  };
  new MutationObserver(mark).observe(document.body, { childList: true, subtree: true });
  mark();
})();
`;

/** The renderer's bundle beside this module (`scripts/reference_bundle.ts` writes it). */
const BUNDLE = new URL("./scalar/standalone.js.gz", import.meta.url);

/** The bundle as stored (gzip), its ETag, and its decompressed bytes once a client needed them. */
interface Bundle {
  gzip: Uint8Array<ArrayBuffer>;
  etag: string;
  identity?: Promise<Uint8Array<ArrayBuffer>>;
}

type Found = { bundle: Bundle } | { missing: string };

/** Each bundle read so far, by URL. */
const found = new Map<string, Promise<Found>>();

async function readBundle(url: URL): Promise<Uint8Array<ArrayBuffer>> {
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return new Uint8Array(await readFile(url));
  }
  const res = await fetch(url);
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url.href} answered ${res.status}`);
  }
  return new Uint8Array(await res.arrayBuffer());
}

async function findBundle(url: URL): Promise<Found> {
  try {
    const gzip = await readBundle(url);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", gzip));
    const etag = `"${
      [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("")
    }"`;
    return { bundle: { gzip, etag } };
  } catch (err) {
    console.error(
      `mail api: the API reference renderer (${url.href}) cannot be read:`,
      (err as Error).message,
    );
    return {
      missing: `The API reference renderer is missing from this installation of the package ` +
        `(${url.href} cannot be read: ${(err as Error).message}).`,
    };
  }
}

/** The bundle, read once; a missing one is looked for again on the next request. */
function loadBundle(url: URL): Promise<Found> {
  const attempt = found.get(url.href) ?? findBundle(url);
  found.set(url.href, attempt);
  attempt.then((f) => {
    if ("missing" in f && found.get(url.href) === attempt) found.delete(url.href);
  });
  return attempt;
}

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Whether an `Accept-Encoding` value accepts gzip (named, or `*`, with a q-value above 0). */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (coding.trim() === "gzip" || coding.trim() === "x-gzip") return weight > 0;
    if (coding.trim() === "*") star = weight > 0;
  }
  return star;
}

/**
 * A handler answering a JSON document made once (the OpenAPI document, 210 KB): gzip-compressed
 * (once, then kept) to a client that accepts gzip, as it is to the others.
 */
export function compressedJson(make: () => unknown): (c: Context) => Promise<Response> {
  let made: { json: string; gzip: Promise<Uint8Array<ArrayBuffer>> } | null = null;
  return async (c) => {
    made ??= (() => {
      const json = JSON.stringify(make());
      const stream = new Blob([json]).stream().pipeThrough(new CompressionStream("gzip"));
      return { json, gzip: new Response(stream).arrayBuffer().then((b) => new Uint8Array(b)) };
    })();
    const headers = { "content-type": "application/json", "vary": "accept-encoding" };
    if (!acceptsGzip(c.req.header("accept-encoding"))) return c.body(made.json, 200, headers);
    return c.body(await made.gzip, 200, { ...headers, "content-encoding": "gzip" });
  };
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

/**
 * Routes under `/docs`: the page and its two scripts (no API key needed). `bundleUrl` is where
 * the renderer's gzip file is read (this package's own unless told).
 */
export function referenceRouter(basePath: string, bundleUrl: URL = BUNDLE): Hono<MailEnv> {
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
    const got = await loadBundle(bundleUrl);
    if ("missing" in got) {
      return c.text(
        `${got.missing} The OpenAPI document is served at ${basePath}/openapi.json.`,
        503,
      );
    }
    const { bundle } = got;
    const headers: Record<string, string> = {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=86400",
      "etag": bundle.etag,
      "vary": "accept-encoding",
    };
    const match = c.req.header("if-none-match");
    if (match && match.split(",").some((t) => t.trim().replace(/^W\//, "") === bundle.etag)) {
      return c.body(null, 304, headers);
    }
    if (acceptsGzip(c.req.header("accept-encoding"))) {
      return c.body(bundle.gzip, 200, { ...headers, "content-encoding": "gzip" });
    }
    bundle.identity ??= gunzip(bundle.gzip);
    return c.body(await bundle.identity, 200, headers);
  });
  return app;
}
