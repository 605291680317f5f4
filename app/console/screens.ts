/**
 * The console's screens, listed once, in navigation order. A new screen is one file under
 * `app/console/` exporting a {@linkcode Screen} plus one line here; its routes then get the
 * sign-in check, its permission, the CSRF middleware and the route-table tests by themselves.
 *
 * @module
 */
import type { Screen, ScreenRoute } from "./context.ts";
import { homeScreen } from "./home.ts";
import { usersScreen } from "./users.ts";
import { relayScreen } from "./relay.ts";
import { mailAccountsScreen } from "./mail_accounts.ts";
import { mailKeysScreen } from "./mail_keys.ts";
import { mailRulesScreen } from "./mail_rules.ts";
import { mailWebhooksScreen } from "./mail_webhooks.ts";
import { mailItemsScreen } from "./mail_items.ts";
import { serverConfigScreen } from "./server_config.ts";
import { serverLoadScreen } from "./server_load.ts";
import { serverStatusScreen } from "./server_status.ts";
import { auditScreen } from "./audit.ts";

/** Every screen, in navigation order. */
export const SCREENS: readonly Screen[] = [
  homeScreen,
  usersScreen,
  relayScreen,
  mailAccountsScreen,
  mailKeysScreen,
  mailRulesScreen,
  mailWebhooksScreen,
  mailItemsScreen,
  serverConfigScreen,
  serverLoadScreen,
  serverStatusScreen,
  auditScreen,
];

/** The path of a screen's route under the console (`/users` + `/:id` → `/users/:id`). */
export function routePath(screen: Screen, route: ScreenRoute): string {
  if (route.path === "/") return screen.path || "/";
  return screen.path + route.path;
}

/** One route of the console, for tests and documentation. */
export interface ConsoleRoute {
  /** `GET` or `POST`. */
  method: "GET" | "POST";
  /** Path under the console's mount path. */
  path: string;
  /** The screen it belongs to, or null for the sign-in routes (open to visitors). */
  screen: string | null;
}

/** The routes open to visitors (sign-in) and the console's files. */
export const PUBLIC_ROUTES: readonly ConsoleRoute[] = [
  { method: "GET", path: "/console.css", screen: null },
  { method: "GET", path: "/console.js", screen: null },
  { method: "GET", path: "/auth-client.js", screen: null },
  { method: "GET", path: "/login", screen: null },
  { method: "GET", path: "/api/auth/login", screen: null },
  { method: "POST", path: "/api/auth/login", screen: null },
  { method: "GET", path: "/api/auth/oauth/:provider/start", screen: null },
  { method: "GET", path: "/api/auth/oauth/:provider/callback", screen: null },
  { method: "GET", path: "/api/auth/relay/start", screen: null },
  { method: "GET", path: "/api/auth/relay/callback", screen: null },
];

/** Every route that needs a signed-in operator: sign-out, then each screen's routes. */
export function consoleRoutes(): ConsoleRoute[] {
  return [
    { method: "POST", path: "/logout", screen: "session" },
    ...SCREENS.flatMap((s) =>
      s.routes.map((r) => ({ method: r.method, path: routePath(s, r), screen: s.id }))
    ),
  ];
}
