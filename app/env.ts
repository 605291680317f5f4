/**
 * The reference app's environment, read once at start with documented local defaults.
 *
 * @module
 */

/** Environment of the reference app (strings as given, numbers parsed). */
export interface AppEnv {
  /** `development` (default) or `production`. Production refuses development-only defaults. */
  MODE: "development" | "production";
  /** Interface to listen on; default 127.0.0.1. */
  HOST: string;
  /** Port to listen on; default 8000. */
  PORT: number;
  /** Every other variable, raw. */
  vars: Record<string, string | undefined>;
}

/** Reads the app's environment from `Deno.env` (or from a given record, for tests). */
export function loadAppEnv(source?: Record<string, string | undefined>): AppEnv {
  const vars = source ?? Deno.env.toObject();
  const mode = vars.MODE === "production" ? "production" : "development";
  const port = Number(vars.PORT ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number, got ${JSON.stringify(vars.PORT)}`);
  }
  return { MODE: mode, HOST: vars.HOST ?? "127.0.0.1", PORT: port, vars };
}
