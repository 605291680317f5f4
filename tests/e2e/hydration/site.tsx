/**
 * The test site of `tests/e2e/hydration.test.ts`, run as its own process under the import map
 * of one React version (`tests/react/react18.importmap.json` or `react19.importmap.json`):
 *
 *     deno run -A --no-config --import-map <map> site.tsx <react|preact|document> <map>
 *
 * It server-renders the test app of that runtime (`react-dom/server` or
 * `preact-render-to-string`), or, for `document`, whole pages with the React build's
 * `renderAuthDocument` (hydrated by `hydrateAuthPage`, `client_document.tsx`); serves the
 * client bundled by `deno bundle` under the same import map, and answers the forms the way
 * docs/react.md says a site does: 303 redirects for a plain form post, JSON for `fetch`.
 * Prints `listening <origin>` when ready, with the React version (or `preact10`/`preact11`,
 * the major of the Preact its elements are made by).
 */
import { createElement, version as reactVersion } from "react";
import { renderToString as renderReact } from "react-dom/server";
import { h } from "preact";
import { renderToString as renderPreact } from "preact-render-to-string";
import { App as ReactApp } from "./app_react.tsx";
import { App as PreactApp } from "./app_preact.ts";
import { renderAuthDocument } from "@gatehouse/gatehouse/react";
import { documentData } from "./document.ts";
import { type AppProps, PROPS_ID } from "./props.ts";

const CLIENTS = {
  react: "client_react.tsx",
  preact: "client_preact.ts",
  document: "client_document.tsx",
};
const runtime = Deno.args[0];
if (!Object.hasOwn(CLIENTS, runtime)) {
  throw new Error("usage: site.tsx <react|preact|document> <import map>");
}
const importMap = Deno.args[1];

async function bundle(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-hydration-" });
  try {
    const out = `${dir}/client.js`;
    const entry = new URL(CLIENTS[runtime as keyof typeof CLIENTS], import.meta.url).pathname;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "--no-config",
        "--import-map",
        importMap,
        "-o",
        out,
        entry,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!success) throw new Error(`deno bundle failed: ${new TextDecoder().decode(stderr)}`);
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const client = await bundle();

function page(props: AppProps): Response {
  const headers = { "content-type": "text/html; charset=utf-8" };
  if (runtime === "document") {
    const html = renderAuthDocument(documentData(props), {
      renderToString: renderReact,
      scriptSrc: "/client.js",
    });
    return new Response(html, { headers });
  }
  const body = runtime === "react"
    ? renderReact(createElement(ReactApp, props))
    : renderPreact(h(PreactApp, props));
  const json = JSON.stringify(props).replace(/</g, "\\u003c");
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${props.page}</title>` +
      `</head><body style="margin:0"><div id="root">${body}</div>` +
      `<script type="application/json" id="${PROPS_ID}">${json}</script>` +
      `<script type="module" src="/client.js"></script></body></html>`,
    { headers },
  );
}

/** 10 or 11: Preact 10 marks its elements with `constructor: undefined`, 11 with a symbol. */
function preactMajor(): number {
  return (h("i", null) as { constructor?: unknown }).constructor === undefined ? 10 : 11;
}

const pages = new Set(["login", "signup", "forgot", "reset", "verify"]);

/** The outcome of a form: an error code, or where to go and who signed in. */
function outcome(
  name: string,
  form: FormData,
): { error: string; status: number } | { next: string; user: string } {
  const email = String(form.get("email") ?? "");
  switch (name) {
    case "login":
      return form.get("password") === "right password"
        ? { next: "/welcome", user: email }
        : { error: "invalid_credentials", status: 401 };
    case "signup":
      return email.startsWith("taken@")
        ? { error: "email_taken", status: 409 }
        : { next: `/verify?email=${encodeURIComponent(email)}`, user: email };
    case "verify":
      return form.get("code") === "123456"
        ? { next: "/welcome", user: email }
        : { error: "invalid_code", status: 400 };
    case "forgot":
      return { next: "/forgot?sent=1", user: email };
    default:
      return form.get("token") === "good"
        ? { next: "/login", user: "reset" }
        : { error: "invalid_token", status: 400 };
  }
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const url = new URL(req.url);
  const name = url.pathname.slice(1);
  if (req.method === "GET" && url.pathname === "/client.js") {
    return new Response(client, { headers: { "content-type": "text/javascript" } });
  }
  if (req.method === "GET" && url.pathname === "/welcome") {
    return new Response("<!doctype html><h1>Welcome</h1>", {
      headers: { "content-type": "text/html" },
    });
  }
  if (req.method === "GET" && pages.has(name)) {
    const q = url.searchParams;
    return page({
      page: name as AppProps["page"],
      error: q.get("error") ?? undefined,
      sent: q.has("sent") || undefined,
      token: q.get("token") ?? undefined,
      email: q.get("email") ?? undefined,
    });
  }
  const post = url.pathname.match(/^\/api\/auth\/([a-z]+)$/);
  if (req.method === "POST" && post && pages.has(post[1])) {
    const result = outcome(post[1], await req.formData());
    const plainPost = (req.headers.get("accept") ?? "").includes("text/html");
    if ("error" in result) {
      if (!plainPost) return Response.json({ error: result.error }, { status: result.status });
      const back = new URL(req.headers.get("referer") ?? `/${post[1]}`, url);
      back.searchParams.set("error", result.error);
      return new Response(null, {
        status: 303,
        headers: { location: back.pathname + back.search },
      });
    }
    if (!plainPost) return Response.json({ ok: true, redirect: result.next, user: result.user });
    return new Response(null, { status: 303, headers: { location: result.next } });
  }
  return new Response("not found", { status: 404 });
});
console.log(
  `listening http://127.0.0.1:${server.addr.port} ${
    runtime === "preact" ? `preact${preactMajor()}` : reactVersion
  }`,
);
