/**
 * The reference app's environment, read once at start with documented local defaults.
 *
 * @module
 */
import { parsePublicUrlSettings, type PublicUrlSettings } from "./public_url.ts";

/** Environment of the reference app (strings as given, numbers parsed). */
export interface AppEnv {
  /**
   * `development` or `production`. Production refuses development-only defaults. Default
   * `development`, or `production` on Deno Deploy (`DENO_DEPLOYMENT_ID` set).
   */
  MODE: "development" | "production";
  /** Interface to listen on; default 127.0.0.1. */
  HOST: string;
  /** Port to listen on; default 8000. */
  PORT: number;
  /** The public origin settings (`APP_URL`, `APP_HOSTS`), see `public_url.ts`. */
  PUBLIC: PublicUrlSettings;
  /** Every other variable, raw. */
  vars: Record<string, string | undefined>;
}

/**
 * Reads the app's environment from `Deno.env` (or from a given record, for tests). Throws an
 * `Error` naming the variable for a malformed `MODE`, `PORT`, `APP_URL` or `APP_HOSTS`, and in
 * production (or on Deno Deploy) when neither `APP_URL` nor `APP_HOSTS` is set.
 *
 * @example
 * ```ts
 * import { loadAppEnv } from "./env.ts";
 * const env = loadAppEnv({ PORT: "8000" });
 * console.log(env.MODE); // "development"
 * ```
 */
export function loadAppEnv(source?: Record<string, string | undefined>): AppEnv {
  const vars = source ?? Deno.env.toObject();
  const deployed = Boolean(vars.DENO_DEPLOYMENT_ID);
  const rawMode = vars.MODE?.trim() || (deployed ? "production" : "development");
  if (rawMode !== "development" && rawMode !== "production") {
    throw new Error(`MODE must be development or production, got ${JSON.stringify(vars.MODE)}`);
  }
  const mode = rawMode;
  const port = Number(vars.PORT ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number, got ${JSON.stringify(vars.PORT)}`);
  }
  const PUBLIC = parsePublicUrlSettings(vars, mode === "production" || deployed);
  return { MODE: mode, HOST: vars.HOST ?? "127.0.0.1", PORT: port, PUBLIC, vars };
}
