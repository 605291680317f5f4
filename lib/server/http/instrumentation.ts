/**
 * How the `http` app reports what its routes do, without knowing who listens: an
 * {@linkcode HttpInstrumentation} wraps each route's handler chain, and the part that measures
 * (the metrics, `metrics/mod.ts`) registers the factory that makes one from the app's and the
 * servers' `metrics` objects. The app asks for it only when a config has a `metrics` object.
 *
 * @module
 */
import type { Next } from "./handler.ts";
import type { ProvisionContext } from "../module/mod.ts";

/** What wraps the routes of the http app. */
export interface HttpInstrumentation {
  /** Wraps one route's chain: `server` is the server's name, `handler` its first handler's. */
  instrument(server: string, handler: string, next: Next): Next;
}

/**
 * Makes the app's instrumentation from the app's `metrics` object and its raw servers (each
 * may have a `metrics` object of its own); undefined when none asks for it.
 */
export type HttpInstrumentationFactory = (
  appMetrics: unknown,
  servers: Record<string, unknown>,
  ctx: ProvisionContext,
) => Promise<HttpInstrumentation | undefined>;

let factory: HttpInstrumentationFactory | null = null;

/**
 * Registers the factory of the http app's instrumentation (the metrics do, when loaded).
 *
 * @example
 * ```ts
 * import { registerHttpInstrumentation } from "./instrumentation.ts";
 * registerHttpInstrumentation(() => Promise.resolve(undefined));
 * ```
 */
export function registerHttpInstrumentation(f: HttpInstrumentationFactory): void {
  factory = f;
}

/** The registered factory, or null when nothing measures this build's routes. */
export function httpInstrumentationFactory(): HttpInstrumentationFactory | null {
  return factory;
}
