/**
 * The shapes every console screen shares: who is signed in (an {@linkcode Operator}), what a
 * screen declares (a {@linkcode Screen}: path, title, permission, routes) and what a route's
 * handler receives (a {@linkcode ConsoleRequest}: the request, the operator, the services).
 *
 * @module
 */
import type { Context } from "hono";
import type { Client } from "@libsql/client";
import type { D1Database, EmailSender, Session, User } from "../../d1.ts";
import type { MailroomClient } from "../../mail.ts";
import type { AppEnv } from "../env.ts";
import type { AdminApi } from "./admin_api.ts";
import type { PageOptions } from "./layout.ts";

/**
 * Who may use a screen: `admin` admits owners (`OWNER_EMAILS`) and users with
 * `is_admin = 1`; `owner` admits owners only.
 */
export type Permission = "admin" | "owner";

/** The signed-in person, with the rights read from the database on this request. */
export interface Operator {
  /** The user row's public view, as stored now. */
  user: User;
  /** The session cookie's identity. */
  session: Session;
  /** True when the e-mail is in `OWNER_EMAILS`. */
  owner: boolean;
  /** True when the user has `is_admin = 1`. */
  admin: boolean;
}

/** True when `op` holds `permission`. */
export function permits(op: Operator, permission: Permission): boolean {
  return permission === "owner" ? op.owner : op.owner || op.admin;
}

/** The services the console talks to, each through its public API. */
export interface ConsoleServices {
  /** The app's environment. */
  env: AppEnv;
  /** Mount path, e.g. `/admin`. */
  base: string;
  /** The toolkit's tables (users, audit log), through the `/d1` functions. */
  db: D1Database;
  /** The app's libSQL client (the relay broker's registry). */
  client: Client;
  /** The mail API's mailroom, through its HTTP API. */
  mail: MailroomClient;
  /** Where the mail API answers, for links (e.g. `/api/account-docs/v2`). */
  mailBase: string;
  /** A Gatehouse server's admin API. */
  server: AdminApi;
  /** The users site's e-mail sender (notices, codes). */
  sendEmail: EmailSender;
  /** The users site's `TOKEN_SECRET` (signup attempts are bound to it). */
  tokenSecret: string;
  /** The users site's name in e-mails. */
  appName: string;
  /** PBKDF2 iterations of new hashes (tests); default the core's. */
  iterations?: number;
}

/** What a screen's route handler receives. */
export interface ConsoleRequest {
  /** The Hono context. */
  c: Context;
  /** The signed-in operator (rights already checked for the screen). */
  op: Operator;
  /** The services. */
  services: ConsoleServices;
  /** The CSRF token to put in every form this page renders (`_csrf`). */
  csrf: string;
  /** A console page with the shell (navigation, operator, sign-out) around it. */
  page(page: PageOptions): Response;
  /** The request's form fields (strings only; files under their name in `files`). */
  form(): Promise<Record<string, string>>;
  /** The request's uploaded files. */
  files(): Promise<Record<string, File>>;
  /** Writes an audit entry for this operator. */
  audit(entry: { action: string; target: string; before?: unknown; after?: unknown }): Promise<
    void
  >;
}

/** One route of a screen, relative to the screen's path. */
export interface ScreenRoute {
  /** `GET` shows, `POST` changes. */
  method: "GET" | "POST";
  /** Path under the screen's path (`/`, `/:id`, `/:id/promote`). */
  path: string;
  /** The handler. */
  handle(req: ConsoleRequest): Response | Promise<Response>;
}

/** A console screen, declared once as data (see `screens.ts`). */
export interface Screen {
  /** Stable id (`users`, `relay`, ...). */
  id: string;
  /** Path under the console's mount path (`/users`). */
  path: string;
  /** Title in the navigation and the page heading. */
  title: string;
  /** Navigation group: the group's listed screen is marked current on its other screens. */
  group?: string;
  /** Listed in the navigation (default true). */
  nav?: boolean;
  /** Who may use it. */
  permission: Permission;
  /** Its routes. */
  routes: ScreenRoute[];
}
