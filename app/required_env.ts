/**
 * What production needs from the environment, in one place: every variable the app's sites
 * require when `MODE=production`, with its shortest acceptable length. `checkProductionEnv`
 * reads them all in one pass and names every one that is missing or too short, so an operator
 * fixes them together instead of one failed start at a time. `.env.example` lists the same
 * variables (a test keeps the two in step).
 *
 * @module
 */

import { DEV_OWNER_PASSWORD_HASH } from "./owner.ts";

/** One variable production needs. */
export interface RequiredVariable {
  /** Its name. */
  name: string;
  /** What it is for, in a few words. */
  what: string;
  /** Shortest acceptable value, in characters (secrets: 16). */
  min: number;
  /** Needed only when this returns true for the environment (default: always). */
  when?: (vars: Record<string, string | undefined>) => boolean;
}

/** Shortest secret the app accepts in production. */
export const MIN_SECRET_LENGTH = 16;

const providerSet = (v: Record<string, string | undefined>) =>
  ["GOOGLE", "GITHUB", "MICROSOFT"].some((p) => Boolean(v[`${p}_CLIENT_ID`]));

/** Every variable production needs, in the order `.env.example` lists them. */
export const REQUIRED_VARIABLES: readonly RequiredVariable[] = [
  { name: "SESSION_SECRET", what: "signs the owner site's sessions", min: MIN_SECRET_LENGTH },
  { name: "OWNER_PASSWORD_HASH", what: "the owner's password hash", min: 20 },
  { name: "OWNER_EMAILS", what: "the owners' e-mails, for the owner site and the console", min: 3 },
  {
    name: "USERS_SESSION_SECRET",
    what: "signs the multi-user site's sessions",
    min: MIN_SECRET_LENGTH,
  },
  {
    name: "TOKEN_SECRET",
    what: "signs codes and links of the multi-user site",
    min: MIN_SECRET_LENGTH,
  },
  { name: "MAIL_API_KEY", what: "the e-mail provider's API key", min: 8 },
  { name: "MAIL_FROM", what: "the sender of the app's e-mails", min: 3 },
  { name: "BROKER_SECRET", what: "signs the relay broker's cookies", min: MIN_SECRET_LENGTH },
  {
    name: "RELAY_DEMO_SESSION_SECRET",
    what: "signs the relay demo's sessions",
    min: MIN_SECRET_LENGTH,
  },
  {
    name: "RELAY_DEMO_RELAY_SECRET",
    what: "the relay demo's secret at the broker",
    min: MIN_SECRET_LENGTH,
  },
  { name: "MAIL_OPERATOR_TOKEN", what: "the mailroom API's bearer token", min: MIN_SECRET_LENGTH },
  { name: "MAIL_SIGNING_SECRET", what: "signs the mail API's file links", min: MIN_SECRET_LENGTH },
  {
    name: "CONSOLE_SESSION_SECRET",
    what: "signs the console's sessions and forms",
    min: MIN_SECRET_LENGTH,
  },
  {
    name: "CONSOLE_RELAY_SECRET",
    what: "the console's secret at the broker",
    min: MIN_SECRET_LENGTH,
  },
  {
    name: "STATE_SECRET",
    what: "signs OAuth state (when a provider is configured)",
    min: MIN_SECRET_LENGTH,
    when: providerSet,
  },
  ...["GOOGLE", "GITHUB", "MICROSOFT"].map((p) => ({
    name: `${p}_CLIENT_SECRET`,
    what: `the ${p[0] + p.slice(1).toLowerCase()} client's secret (when ${p}_CLIENT_ID is set)`,
    min: 8,
    when: (v: Record<string, string | undefined>) => Boolean(v[`${p}_CLIENT_ID`]),
  })),
];

/**
 * Every problem with a production environment, one sentence each naming the variable (empty
 * when it can start): missing or too short required variables, neither `APP_URL` nor
 * `APP_HOSTS`, `DEV_IDP=on`, a password hash that is not one.
 *
 * @example
 * ```ts
 * import { checkProductionEnv } from "./required_env.ts";
 * const problems = checkProductionEnv({ MODE: "production" });
 * console.log(problems.length > 10); // true: nothing is set
 * ```
 */
export function checkProductionEnv(vars: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  for (const v of REQUIRED_VARIABLES) {
    if (v.when && !v.when(vars)) continue;
    const value = vars[v.name]?.trim() ?? "";
    if (!value) problems.push(`${v.name} is missing (${v.what}).`);
    else if (value.length < v.min) {
      problems.push(`${v.name} is too short: at least ${v.min} characters (${v.what}).`);
    } else if (/^development-only-/.test(value)) {
      problems.push(`${v.name} holds a development default: set a value of your own.`);
    }
  }
  const hash = vars.OWNER_PASSWORD_HASH?.trim();
  if (hash === DEV_OWNER_PASSWORD_HASH) {
    problems.push("OWNER_PASSWORD_HASH is the development hash: make one of your own password.");
  } else if (hash && hash.length >= 20 && !hash.startsWith("$pbkdf2-sha256$")) {
    problems.push(
      "OWNER_PASSWORD_HASH is not a password hash: make one with " +
        '`deno eval \'import {hashPassword} from "./mod.ts"; console.log(await hashPassword("..."))\'`.',
    );
  }
  if (!vars.APP_URL?.trim() && !vars.APP_HOSTS?.trim()) {
    problems.push("APP_URL or APP_HOSTS is missing (the app's public address).");
  }
  if (vars.DEV_IDP === "on") {
    problems.push("DEV_IDP=on is refused in production: configure real provider credentials.");
  }
  return problems;
}
