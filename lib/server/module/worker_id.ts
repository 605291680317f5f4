/**
 * Which worker process this is, for modules that keep state of their own per process (a
 * distributed rate-limit zone is one instance per worker): the primary gives each worker its
 * number in {@linkcode WORKER_ENV}.
 *
 * @module
 */

/** The environment variable each worker process gets: its number, 1 to N. */
export const WORKER_ENV = "GATEHOUSE_WORKER";
