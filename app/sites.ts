/**
 * The sites the reference app mounts. A new site is one file under `app/` plus one line here.
 *
 * @module
 */
import type { Hono } from "hono";
import type { AppEnv } from "./env.ts";

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
export const sites: SiteEntry[] = [];
