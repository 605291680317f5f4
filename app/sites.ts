/**
 * The sites the reference app mounts. A new site is one file under `app/` plus one line here.
 *
 * @module
 */
import type { Hono } from "hono";
import type { AppEnv } from "./env.ts";
import { createBroker } from "./broker.ts";
import { devIdpSite } from "./dev_idp.ts";
import { createRelayDemo } from "./relay_demo.ts";
import { createOwnerSite } from "./owner.ts";
import { createMailSite } from "./mail.ts";
import { createUsersSite } from "./users.ts";

/** One mounted site. */
export interface SiteEntry {
  /** Mount path, e.g. `/owner`. */
  path: string;
  /** Title on the index page. */
  title: string;
  /** Builds the site's Hono app (routes relative to the mount path). */
  create(env: AppEnv): Hono | Promise<Hono>;
}

/** Mounted sites, in index order. */
export const sites: SiteEntry[] = [
  { path: "/owner", title: "Owner-only site", create: (env) => createOwnerSite(env) },
  { path: "/users", title: "Multi-user site", create: (env) => createUsersSite({ env }) },
  { path: "/broker", title: "Relay broker", create: (env) => createBroker({ env }) },
  {
    path: "/relay-demo",
    title: "Relay demo site (sign-in through the broker)",
    create: (env) => createRelayDemo({ env }),
  },
  { path: "/api/account-docs/v2", title: "Mail-scanning API", create: createMailSite },
  {
    path: "/dev-idp",
    title: "Development identity provider (development mode only)",
    create: devIdpSite,
  },
];
