/**
 * The web server screen: a Gatehouse server's live config (`GATEHOUSE_ADMIN`) as a tree to
 * browse, and one node edited in place with optimistic concurrency: the edit is sent with the
 * `Etag` the page was shown with (`If-Match`), so a change made meanwhile by anyone (412) is
 * never overwritten. The conflict page shows both versions; applying yours over the new one is
 * a second, deliberate step.
 *
 * @module
 */
import { type ComponentChildren, h } from "preact";
import type { ConsoleRequest, Screen } from "./context.ts";
import { Card, Csrf, Field, Table } from "./ui.ts";

/** A config path from a form or query: segments without `..`, empty for the root. */
export function configPath(raw: string | undefined): string | null {
  const trimmed = (raw ?? "").trim().replace(/^\/+|\/+$/g, "").replace(/^config\/?/, "");
  if (trimmed === "") return "";
  const parts = trimmed.split("/");
  if (
    parts.some((p) => p === "" || p === "." || p === ".." || p.length > 200) || parts.length > 64
  ) {
    return null;
  }
  return parts.map((p) => encodeURIComponent(decodeURIComponent(p))).join("/");
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? "null";

function kindOf(v: unknown): string {
  const n = (count: number, what: string) => `${count} ${what}${count === 1 ? "" : "s"}`;
  if (Array.isArray(v)) return `list of ${n(v.length, "item")}`;
  if (v !== null && typeof v === "object") {
    return `object with ${n(Object.keys(v).length, "field")}`;
  }
  return typeof v === "string" ? JSON.stringify(v).slice(0, 80) : String(v);
}

function crumbs(base: string, path: string) {
  const parts = path ? path.split("/") : [];
  return h(
    "nav",
    { class: "crumbs", "aria-label": "Where in the config" },
    h(
      "ol",
      null,
      h("li", null, h("a", { href: `${base}/server` }, "config")),
      parts.map((p, i) =>
        h(
          "li",
          { key: i },
          i === parts.length - 1
            ? h("span", { "aria-current": "location" }, decodeURIComponent(p))
            : h(
              "a",
              { href: `${base}/server?path=${parts.slice(0, i + 1).join("/")}` },
              decodeURIComponent(p),
            ),
        )
      ),
    ),
  );
}

function editor(req: ConsoleRequest, path: string, etag: string, value: string, label: string) {
  return h(
    "form",
    { method: "post", action: `${req.services.base}/server/edit`, class: "stack" },
    h(Csrf, { token: req.csrf }),
    h("input", { type: "hidden", name: "path", value: path }),
    h("input", { type: "hidden", name: "etag", value: etag }),
    h(Field, {
      label: "JSON of this node",
      name: "value",
      type: "textarea",
      value,
      hint: "Saved only if nobody changed this part of the config since this page was shown.",
      attrs: {
        rows: Math.min(30, Math.max(8, value.split("\n").length + 1)),
        "data-json": "json-problem",
      },
    }),
    h("p", { id: "json-problem", class: "hint", role: "status" }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, label)),
  );
}

async function browse(req: ConsoleRequest): Promise<Response> {
  const { server, base } = req.services;
  const path = configPath(req.c.req.query("path"));
  if (path === null) {
    return req.page({
      title: "Web server",
      status: 400,
      error: "That is not a config path.",
      body: h("a", { href: `${base}/server` }, "The whole config"),
    });
  }
  const got = await server.getConfig(path);
  const saved = req.c.req.query("done") === "saved";
  // "connected" only when it answered: the error above says what went wrong otherwise
  const header = h(
    "p",
    { key: "where", class: "muted" },
    got.status === 0
      ? `The admin endpoint: ${server.base} (GATEHOUSE_ADMIN).`
      : `Connected to the admin endpoint at ${server.base}.`,
  );
  if (got.error || !got.etag) {
    return req.page({
      title: "Web server",
      status: got.status === 0 ? 502 : got.status >= 400 ? got.status : 502,
      error: got.error ?? "The server's answer had no Etag, so it cannot be edited safely.",
      body: [header, crumbs(base, path)],
    });
  }
  const value = got.json;
  const children: ComponentChildren[][] = value !== null && typeof value === "object"
    ? Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      h("a", { href: `${base}/server?path=${path ? `${path}/` : ""}${encodeURIComponent(k)}` }, k),
      kindOf(v),
    ])
    : [];
  return req.page({
    title: "Web server",
    lead: "The live configuration of the server, as its admin API shows it.",
    notice: saved ? "Saved: the server runs the changed configuration." : undefined,
    body: [
      header,
      crumbs(base, path),
      h(
        "div",
        { key: "links", class: "actions" },
        h("a", { class: "button secondary", href: `${base}/server/load` }, "Load a whole config"),
        h("a", { class: "button secondary", href: `${base}/server/status` }, "Upstreams and CA"),
      ),
      value !== null && typeof value === "object"
        ? h(Table, {
          key: "t",
          caption: `Inside ${path || "the config"}`,
          head: ["Key", "Holds"],
          rows: children,
          empty: "This node is empty.",
        })
        : null,
      h(
        Card,
        { key: "edit", title: "Edit this node" },
        editor(req, path, got.etag, pretty(value), "Save this node"),
      ),
    ],
  });
}

async function edit(req: ConsoleRequest): Promise<Response> {
  const { server, base } = req.services;
  const f = await req.form();
  const path = configPath(f.path);
  const text = f.value ?? "";
  if (path === null) {
    return req.page({
      title: "Web server",
      status: 400,
      error: "That is not a config path.",
      body: null,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return req.page({
      title: "Web server",
      status: 400,
      error: `Nothing was saved: the node is not valid JSON (${(e as Error).message}).`,
      body: [crumbs(base, path), editor(req, path, f.etag ?? "", text, "Save this node")],
    });
  }
  // Without the version the page was shown with, a save could overwrite a change made
  // meanwhile: refused, never sent without If-Match.
  if (!(f.etag ?? "").trim()) {
    const now = await server.getConfig(path);
    return req.page({
      title: "Web server",
      status: 400,
      error:
        "Nothing was saved: the form did not say which version of the node it edits (its Etag), so saving could overwrite a change made meanwhile. Here is the node as it is now; edit it again.",
      body: [
        crumbs(base, path),
        now.error || !now.etag
          ? h("p", { key: "e", class: "alert" }, now.error ?? "The server sent no Etag.")
          : h(
            "div",
            { key: "cmp", class: "compare" },
            h(
              Card,
              { title: "Current version on the server" },
              editor(req, path, now.etag, pretty(now.json), "Save this node"),
            ),
            h(Card, { title: "What you sent (not saved)" }, h("pre", { class: "json" }, text)),
          ),
      ],
    });
  }
  const before = await server.getConfig(path);
  if (before.error) {
    return req.page({
      title: "Web server",
      status: 502,
      error: before.error,
      body: crumbs(base, path),
    });
  }
  // Sent with the Etag the page was shown with: the server answers 412 if the node changed.
  const r = await server.patchConfig(path, JSON.stringify(parsed), f.etag ?? "");
  if (r.status === 412) {
    const now = await server.getConfig(path);
    await req.audit({
      action: "server.config.conflict",
      target: `server:/config/${path}`,
      before: now.json ?? null,
      after: parsed,
    });
    return req.page({
      title: "Someone changed this part of the config",
      status: 409,
      error:
        "Nothing was saved: this node changed on the server after you opened it. Compare the two versions below.",
      body: [
        crumbs(base, path),
        h(
          "div",
          { key: "cmp", class: "compare" },
          h(
            Card,
            { title: "Current version on the server" },
            h("pre", { class: "json" }, pretty(now.json)),
          ),
          h(
            Card,
            { title: "Your version (not saved)" },
            editor(
              req,
              path,
              now.etag ?? "",
              pretty(parsed),
              "Save my version over the current one",
            ),
          ),
        ),
        h(
          "p",
          { key: "b" },
          h(
            "a",
            { href: `${base}/server?path=${path}` },
            "Drop my version and start again from the current one",
          ),
        ),
      ],
    });
  }
  if (r.error) {
    return req.page({
      title: "Web server",
      status: 400,
      error: `Nothing was saved. ${r.error}`,
      body: [
        crumbs(base, path),
        editor(req, path, before.etag ?? "", pretty(parsed), "Save this node"),
      ],
    });
  }
  await req.audit({
    action: "server.config.patch",
    target: `server:/config/${path}`,
    before: before.json ?? null,
    after: parsed,
  });
  return req.c.redirect(`${base}/server?path=${path}&done=saved`, 303);
}

/** The web server screen (the live config). */
export const serverConfigScreen: Screen = {
  id: "server",
  path: "/server",
  title: "Web server",
  group: "Web server",
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: browse },
    { method: "POST", path: "/edit", handle: edit },
  ],
};
