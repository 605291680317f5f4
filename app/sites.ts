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
import { FORM_BODY_LIMIT } from "./middleware/body_limit.ts";
import { CONSOLE_BODY_LIMIT, createConsole } from "./console/mod.ts";

/** One mounted site. */
export interface SiteEntry {
  /** Mount path, e.g. `/owner`. */
  path: string;
  /** Title on the index page. */
  title: string;
  /** Builds the site's Hono app (routes relative to the mount path). */
  create(env: AppEnv): Hono | Promise<Hono>;
  /**
   * Largest request body in bytes on every route of the site (413 above it), or `"own"` when
   * the site enforces limits per route itself.
   */
  bodyLimit: number | "own";
}

/** Mounted sites, in index order. */
export const sites: SiteEntry[] = [
  {
    path: "/owner",
    title: "Owner-only site",
    create: (env) => createOwnerSite(env),
    bodyLimit: FORM_BODY_LIMIT,
  },
  {
    path: "/users",
    title: "Multi-user site",
    create: (env) => createUsersSite({ env }),
    bodyLimit: FORM_BODY_LIMIT,
  },
  {
    path: "/broker",
    title: "Relay broker",
    create: (env) => createBroker({ env }),
    bodyLimit: FORM_BODY_LIMIT,
  },
  {
    path: "/relay-demo",
    title: "Relay demo site (sign-in through the broker)",
    create: (env) => createRelayDemo({ env }),
    bodyLimit: FORM_BODY_LIMIT,
  },
  // 64 KiB JSON bodies, 20 MiB mailroom uploads (after the operator token), see lib/mail.
  {
    path: "/api/account-docs/v2",
    title: "Mail-scanning API",
    create: createMailSite,
    bodyLimit: "own",
  },
  {
    path: "/admin",
    title: "Operator's console",
    create: (env) => createConsole({ env }),
    bodyLimit: CONSOLE_BODY_LIMIT,
  },
  {
    path: "/dev-idp",
    title: "Development identity provider (development mode only)",
    create: devIdpSite,
    bodyLimit: FORM_BODY_LIMIT,
  },
];
