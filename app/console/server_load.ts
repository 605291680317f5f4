/**
 * Loading a whole config into a Gatehouse server: paste or upload a Gatehousefile or JSON,
 * see the JSON the server's adapter makes of it (`POST /adapt`, nothing loaded yet) with its
 * warnings, then load exactly that (`POST /load`). A failed load leaves the old config running
 * (the server rolls back) and says why.
 *
 * @module
 */
import { h } from "preact";
import type { ConsoleRequest, Screen } from "./context.ts";
import { Card, Csrf, Field, PostForm } from "./ui.ts";

/** The formats offered, with the content type the admin API's adapters answer to. */
const FORMATS: Record<string, { label: string; type: string }> = {
  gatehousefile: { label: "Gatehousefile", type: "text/caddyfile" },
  json: { label: "JSON", type: "application/json" },
};

function form(req: ConsoleRequest, format = "gatehousefile", text = "") {
  return h(
    "form",
    {
      method: "post",
      action: `${req.services.base}/server/load/preview`,
      class: "stack",
      enctype: "multipart/form-data",
    },
    h(Csrf, { token: req.csrf }),
    h(
      "div",
      { class: "field" },
      h("label", { for: "load-format" }, "Format"),
      h(
        "select",
        { id: "load-format", name: "format" },
        Object.entries(FORMATS).map(([k, f]) =>
          h("option", { key: k, value: k, selected: k === format }, f.label)
        ),
      ),
    ),
    h(
      "p",
      { class: "hint" },
      "A Gatehousefile is written in the Caddyfile syntax: a Caddy user's Caddyfile works as it is.",
    ),
    h(Field, {
      label: "The config",
      name: "text",
      type: "textarea",
      value: text,
      hint: "Paste it here, or choose a file below.",
      attrs: { rows: 14 },
    }),
    h(Field, {
      label: "Or a file",
      name: "file",
      type: "file",
      attrs: { accept: ".json,.gatehousefile,.caddyfile,text/plain,application/json" },
    }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Preview the JSON")),
  );
}

function start(req: ConsoleRequest, error?: string, format?: string, text?: string): Response {
  return req.page({
    title: "Load a config",
    lead: `Replaces the whole configuration of the server at ${req.services.server.base}.`,
    status: error ? 400 : 200,
    error,
    body: h(Card, null, form(req, format, text)),
  });
}

async function preview(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const file = (await req.files()).file;
  const format = FORMATS[f.format] ? f.format : "gatehousefile";
  const text = file && file.size > 0 ? await file.text() : f.text ?? "";
  if (!text.trim()) return start(req, "Give a config: paste it or choose a file.", format, text);
  const adapted = await req.services.server.adapt(text, FORMATS[format].type);
  if (adapted.error) {
    return start(
      req,
      `The server could not read this config, so nothing was loaded. ${adapted.error}`,
      format,
      text,
    );
  }
  const answer = adapted.json as {
    result?: unknown;
    warnings?: { file?: string; line?: number; message?: string }[];
  };
  const json = JSON.stringify(answer?.result ?? null, null, 2);
  const warnings = answer?.warnings ?? [];
  return req.page({
    title: "Preview of the config",
    lead: "This is the JSON the server will run. Nothing is loaded until you say so.",
    body: [
      warnings.length
        ? h(
          Card,
          { key: "w", title: `Warnings of the ${FORMATS[format].label} adapter` },
          h(
            "ul",
            null,
            warnings.map((w, i) =>
              h(
                "li",
                { key: i },
                `${w.file ?? ""}${w.line ? `:${w.line}` : ""} ${w.message ?? ""}`.trim(),
              )
            ),
          ),
        )
        : null,
      h(
        Card,
        { key: "j", title: "Adapted JSON" },
        h("pre", { class: "json", tabIndex: 0, "aria-label": "Adapted JSON" }, json),
      ),
      h(
        PostForm,
        {
          key: "go",
          action: `${req.services.base}/server/load/apply`,
          csrf: req.csrf,
          label: "Load this configuration",
          hidden: { config: json },
        },
        h(
          "a",
          { class: "button secondary", href: `${req.services.base}/server/load` },
          "Start again",
        ),
      ),
    ],
  });
}

async function apply(req: ConsoleRequest): Promise<Response> {
  const f = await req.form();
  const { server, base } = req.services;
  let config: unknown;
  try {
    config = JSON.parse(f.config ?? "");
  } catch {
    return start(req, "The previewed config did not come back whole: preview it again.");
  }
  const before = await server.getConfig("");
  const r = await server.load(JSON.stringify(config));
  if (r.error) {
    return start(
      req,
      `The server kept its old configuration: ${r.error}`,
      "json",
      JSON.stringify(config, null, 2),
    );
  }
  await req.audit({
    action: "server.load",
    target: `server:${server.base}`,
    before: before.json ?? null,
    after: config,
  });
  return req.page({
    title: "Configuration loaded",
    notice: "The server runs the new configuration.",
    body: h("p", null, h("a", { href: `${base}/server` }, "Browse the live config")),
  });
}

/** The config-loading screen. */
export const serverLoadScreen: Screen = {
  id: "server-load",
  path: "/server/load",
  title: "Load a config",
  group: "Web server",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => start(req) },
    { method: "POST", path: "/preview", handle: preview },
    { method: "POST", path: "/apply", handle: apply },
  ],
};
