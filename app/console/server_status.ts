/**
 * The server's health: the reverse proxy's upstreams (`/reverse_proxy/upstreams`: requests in
 * flight and failures remembered by passive health checks), refreshed live in the browser
 * every two seconds (and on each reload without JavaScript), and the local CA
 * (`/pki/ca/local`).
 *
 * @module
 */
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import type { ConsoleRequest, Screen } from "./context.ts";
import type { Upstream } from "./admin_api.ts";
import { Badge, Card, Facts } from "./ui.ts";
import { documentHead } from "./layout.ts";

async function upstreamsSection(req: ConsoleRequest) {
  const r = await req.services.server.upstreams();
  const list = Array.isArray(r.json) ? r.json as Upstream[] : [];
  return h(
    "section",
    {
      id: "upstreams",
      class: "card",
      "aria-labelledby": "upstreams-title",
      "data-live": `${req.services.base}/server/status/upstreams`,
      "data-interval": "2000",
    },
    h("h2", { id: "upstreams-title" }, "Upstreams"),
    h(
      "p",
      { class: "hint", "data-live-status": "" },
      `Read at ${new Date().toISOString().slice(11, 19)} UTC.`,
    ),
    h(
      "div",
      { "data-live-body": "" },
      r.error
        ? h("p", { class: "alert" }, r.error)
        : list.length === 0
        ? h("p", { class: "muted" }, "No reverse proxy upstream is configured.")
        : h(
          "div",
          { class: "table-wrap", role: "region", "aria-label": "Upstreams", tabIndex: 0 },
          h(
            "table",
            null,
            h("caption", null, "Upstreams of the reverse proxy"),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ["Address", "Health", "Requests in flight", "Recent failures"].map((t) =>
                  h("th", { scope: "col", key: t }, t)
                ),
              ),
            ),
            h(
              "tbody",
              null,
              list.map((u) =>
                h(
                  "tr",
                  { key: u.address },
                  h("td", null, h("code", null, u.address)),
                  h(
                    "td",
                    null,
                    u.fails > 0
                      ? h(Badge, { tone: "bad", text: "Failing" })
                      : h(Badge, { tone: "ok", text: "Healthy" }),
                  ),
                  h("td", { class: "num" }, String(u.num_requests)),
                  h("td", { class: "num" }, String(u.fails)),
                )
              ),
            ),
          ),
        ),
    ),
  );
}

async function status(req: ConsoleRequest): Promise<Response> {
  const { server } = req.services;
  const [ups, ca] = await Promise.all([upstreamsSection(req), server.ca("local")]);
  const info = ca.json as Record<string, string> | undefined;
  return req.page({
    title: "Server health",
    lead: `The server at ${server.base}.`,
    body: [
      h("div", { key: "u" }, ups),
      h(
        Card,
        { key: "ca", title: "Local certificate authority" },
        ca.error || !info
          ? h("p", { class: "alert" }, ca.error ?? "The server did not describe its CA.")
          : [
            h(Facts, {
              key: "f",
              items: [
                ["Id", info.id],
                ["Name", info.name],
                ["Root", info.root_common_name],
                ["Intermediate", info.intermediate_common_name],
              ],
            }),
            h(
              "details",
              { key: "pem" },
              h("summary", null, "Root certificate (PEM)"),
              h("pre", { class: "json" }, info.root_certificate),
            ),
          ],
      ),
    ],
  });
}

async function fragment(req: ConsoleRequest): Promise<Response> {
  // A small page of its own: the live refresh reads its section; opened directly, it reads well.
  const html = documentHead(req.services.base, "Upstreams") + `<body><main>` +
    renderToString(await upstreamsSection(req)) + `</main></body></html>`;
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}

/** The server health screen. */
export const serverStatusScreen: Screen = {
  id: "server-status",
  path: "/server/status",
  title: "Server health",
  group: "Web server",
  nav: false,
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: status },
    { method: "GET", path: "/upstreams", handle: fragment },
  ],
};
