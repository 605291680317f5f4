/**
 * The relay sites screen: the sites registered with the app's relay broker. Register one
 * (its relay secret is shown once), change its name and return URLs (checked as the broker
 * checks them), rotate its secret (shown once), remove it (after a confirmation page).
 *
 * @module
 */
import { h } from "preact";
import {
  findRelaySite,
  listRelaySites,
  MAX_RETURN_URLS,
  newRelaySecret,
  registerRelaySite,
  removeRelaySite,
  returnUrlProblem,
  rotateRelaySecret,
  SITE_ID,
  updateRelaySite,
} from "../relay_registry.ts";
import { BROKER_PATH } from "../broker.ts";
import type { ConsoleRequest, Screen } from "./context.ts";
import { Card, Field, PostForm, ShownOnce, Table, When } from "./ui.ts";

/** The console's own registration: made from its variables at start, so not changed here. */
const OWN_SITE = "console";

interface SiteInput {
  id: string;
  name: string;
  returnUrls: string[];
}

function parse(
  f: Record<string, string>,
  withId: boolean,
): { site: SiteInput; problems: string[] } {
  const site = {
    id: (f.id ?? "").trim(),
    name: (f.name ?? "").trim(),
    returnUrls: [
      ...new Set((f.return_urls ?? "").split(/\r?\n/).map((u) => u.trim()).filter(Boolean)),
    ],
  };
  const problems: string[] = [];
  if (withId && !SITE_ID.test(site.id)) {
    problems.push(
      "The id has 1 to 63 lower-case letters, digits, - and _, and starts with a letter or digit.",
    );
  }
  if (!site.name || site.name.length > 100) problems.push("The name has 1 to 100 characters.");
  if (site.returnUrls.length === 0 || site.returnUrls.length > MAX_RETURN_URLS) {
    problems.push(`Give 1 to ${MAX_RETURN_URLS} return URLs, one per line.`);
  }
  for (const url of site.returnUrls) {
    const p = returnUrlProblem(url);
    if (p) problems.push(p);
  }
  return { site, problems };
}

function siteFields(site: Partial<SiteInput>, withId: boolean) {
  return [
    withId
      ? h(Field, {
        key: "id",
        label: "Site id",
        name: "id",
        value: site.id,
        required: true,
        hint: "What the site sends as site= to the broker, e.g. billing-app.",
        attrs: { pattern: "[a-z0-9][a-z0-9_-]{0,62}", autocomplete: "off" },
      })
      : null,
    h(Field, {
      key: "name",
      label: "Name",
      name: "name",
      value: site.name,
      required: true,
      hint: "Shown to people on the broker's sign-in page.",
      attrs: { maxLength: 100 },
    }),
    h(Field, {
      key: "urls",
      label: "Return URLs",
      name: "return_urls",
      type: "textarea",
      value: (site.returnUrls ?? []).join("\n"),
      required: true,
      hint: "One per line: an absolute http(s) URL, or a path on this app (/site/callback). " +
        "No query or fragment: the broker sends people back only to exactly these.",
      attrs: { rows: 4 },
    }),
  ];
}

async function list(req: ConsoleRequest, form?: { site: SiteInput; problems: string[] }) {
  const { services, csrf } = req;
  const sites = await listRelaySites(services.client);
  const base = `${services.base}/relay`;
  const done = req.c.req.query("done");
  return req.page({
    title: "Relay sites",
    lead: `Sites that sign people in through the app's relay broker at ${BROKER_PATH}.`,
    status: form ? 400 : 200,
    notice: done === "removed"
      ? "The site was removed: the broker no longer signs people in for it."
      : undefined,
    error: form?.problems.join(" "),
    body: [
      h(Table, {
        key: "sites",
        caption: "Registered sites",
        head: ["Site", "Name", "Return URLs", "Registered"],
        rows: sites.map((s) => [
          h("a", { href: `${base}/${encodeURIComponent(s.id)}` }, s.id),
          s.name,
          h(
            "ul",
            { class: "plain" },
            s.returnUrls.map((u) => h("li", { key: u }, h("code", null, u))),
          ),
          h(When, { ms: s.createdAt }),
        ]),
        empty: "No site is registered yet.",
      }),
      h(
        Card,
        { key: "new", title: "Register a site" },
        h(
          PostForm,
          { action: base, csrf, label: "Register the site", layout: "stack" },
          siteFields(form?.site ?? {}, true),
        ),
      ),
    ],
  });
}

function secretPage(
  req: ConsoleRequest,
  title: string,
  notice: string,
  id: string,
  secret: string,
) {
  return req.page({
    title,
    notice,
    body: h(
      Card,
      null,
      h(ShownOnce, {
        id: "relay-secret",
        label: `The relay secret of ${id}`,
        value: secret,
        hint: "It is shown only this once. Set it as the site's RELAY_SECRET; the broker keeps " +
          "it to sign the site's tokens.",
      }),
      h(
        "p",
        null,
        h("a", { href: `${req.services.base}/relay/${encodeURIComponent(id)}` }, "Go to the site"),
      ),
    ),
  });
}

async function register(req: ConsoleRequest): Promise<Response> {
  const parsed = parse(await req.form(), true);
  const { client } = req.services;
  if (!parsed.problems.length && await findRelaySite(client, parsed.site.id)) {
    parsed.problems.push(
      `A site with the id ${parsed.site.id} is registered already: change it on its page.`,
    );
  }
  if (parsed.problems.length) return await list(req, parsed);
  const secret = newRelaySecret();
  await registerRelaySite(client, { ...parsed.site, secret });
  await req.audit({
    action: "relay.register",
    target: `relay:${parsed.site.id}`,
    after: parsed.site,
  });
  return secretPage(
    req,
    "Site registered",
    `${parsed.site.name} is registered with the broker.`,
    parsed.site.id,
    secret,
  );
}

async function show(req: ConsoleRequest, form?: { site: SiteInput; problems: string[] }) {
  const id = req.c.req.param("id") ?? "";
  const site = await findRelaySite(req.services.client, id);
  const base = `${req.services.base}/relay`;
  if (!site) {
    return req.page({
      title: "Site not found",
      status: 404,
      error: `No site ${id} is registered with the broker.`,
      body: h("p", null, h("a", { href: base }, "Back to the relay sites")),
    });
  }
  const at = `${base}/${encodeURIComponent(site.id)}`;
  const own = site.id === OWN_SITE;
  return req.page({
    title: `Relay site ${site.id}`,
    status: form ? 400 : 200,
    notice: req.c.req.query("done") === "saved"
      ? "Saved: the broker uses the new return URLs now."
      : undefined,
    error: form?.problems.join(" "),
    body: [
      own
        ? h(
          "p",
          { key: "own", class: "notice" },
          "This is the console's own registration: it is made again at each start from CONSOLE_RELAY_SECRET, so its secret cannot be rotated or removed here.",
        )
        : null,
      h(
        Card,
        { key: "edit", title: "Name and return URLs" },
        h(
          PostForm,
          { action: at, csrf: req.csrf, label: "Save", layout: "stack" },
          siteFields(form?.site ?? site, false),
        ),
      ),
      own ? null : h(
        Card,
        { key: "rotate", title: "Relay secret" },
        h(
          "p",
          null,
          "A new secret replaces the old one at once: the site signs people in again only once it has the new one.",
        ),
        h(PostForm, {
          action: `${at}/rotate`,
          csrf: req.csrf,
          label: "Rotate the secret",
          variant: "secondary",
        }),
      ),
      own ? null : h(
        Card,
        { key: "remove", title: "Remove", class: "danger-zone" },
        h("p", null, "The broker stops signing people in for this site."),
        h("a", { class: "button danger", href: `${at}/remove` }, "Remove this site…"),
      ),
      h("p", { key: "back" }, h("a", { href: base }, "Back to the relay sites")),
    ],
  });
}

async function save(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const before = await findRelaySite(req.services.client, id);
  const parsed = parse(await req.form(), false);
  if (!before) return await show(req);
  if (parsed.problems.length) return await show(req, parsed);
  await updateRelaySite(req.services.client, id, parsed.site);
  await req.audit({
    action: "relay.update",
    target: `relay:${id}`,
    before: { name: before.name, returnUrls: before.returnUrls },
    after: { name: parsed.site.name, returnUrls: parsed.site.returnUrls },
  });
  return req.c.redirect(`${req.services.base}/relay/${encodeURIComponent(id)}?done=saved`, 303);
}

async function rotate(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const secret = id === OWN_SITE ? null : await rotateRelaySecret(req.services.client, id);
  if (!secret) return await show(req);
  await req.audit({ action: "relay.rotate_secret", target: `relay:${id}` });
  return secretPage(
    req,
    "Secret rotated",
    "The broker signs this site's tokens with the new secret from now on.",
    id,
    secret,
  );
}

async function confirmRemove(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const site = await findRelaySite(req.services.client, id);
  if (!site || id === OWN_SITE) return await show(req);
  const at = `${req.services.base}/relay/${encodeURIComponent(id)}`;
  return req.page({
    title: `Remove ${site.id}?`,
    body: h(
      Card,
      { class: "danger-zone" },
      h(
        "p",
        null,
        `The broker stops signing people in for ${site.name}: its sign-in buttons stop working. Registering it again gives it a new secret.`,
      ),
      h(
        "div",
        { class: "actions" },
        h(PostForm, {
          action: `${at}/remove`,
          csrf: req.csrf,
          label: "Remove the site",
          variant: "danger",
        }),
        h("a", { class: "button secondary", href: at }, "Keep it"),
      ),
    ),
  });
}

async function remove(req: ConsoleRequest): Promise<Response> {
  const id = req.c.req.param("id") ?? "";
  const site = await findRelaySite(req.services.client, id);
  if (!site || id === OWN_SITE || !(await removeRelaySite(req.services.client, id))) {
    return await show(req);
  }
  await req.audit({
    action: "relay.remove",
    target: `relay:${id}`,
    before: { name: site.name, returnUrls: site.returnUrls },
  });
  return req.c.redirect(`${req.services.base}/relay?done=removed`, 303);
}

/** The relay sites screen. */
export const relayScreen: Screen = {
  id: "relay",
  path: "/relay",
  title: "Relay sites",
  permission: "admin",
  routes: [
    { method: "GET", path: "/", handle: (req) => list(req) },
    { method: "POST", path: "/", handle: register },
    { method: "GET", path: "/:id", handle: (req) => show(req) },
    { method: "POST", path: "/:id", handle: save },
    { method: "POST", path: "/:id/rotate", handle: rotate },
    { method: "GET", path: "/:id/remove", handle: confirmRemove },
    { method: "POST", path: "/:id/remove", handle: remove },
  ],
};
