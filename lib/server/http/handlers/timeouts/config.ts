/**
 * The config the `timeouts` directive writes (`http.handlers.timeouts`, of later Caddy
 * versions). This server has no such handler (its servers' own timeouts are the `http`
 * server fields): the directive (`caddyfile.ts`) makes this type so that a Caddyfile adapts
 * as Caddy adapts it, and a config naming the module is refused when loaded.
 *
 * @module
 */

/** `http.handlers.timeouts`. */
export type TimeoutsConfig = {
  /** The module name. */
  handler: "timeouts";
  /** How long reading the request may take (nanoseconds). */
  read_timeout?: number;
  /** The least rate the request body is read at (bytes per second). */
  read_min_rate?: number;
  /** How long writing the response may take (nanoseconds). */
  write_timeout?: number;
  /** The least rate the response is written at (bytes per second). */
  write_min_rate?: number;
  /** The largest write of the response at a time (bytes). */
  max_write_chunk?: number;
};
