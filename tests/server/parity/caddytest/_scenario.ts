/**
 * A Caddy integration scenario as data: the config a Go test loads (`InitServer`), the loads it
 * expects to fail (`AssertLoadError`), the adaptations it compares (`AssertAdapt`), the
 * requests it sends with the answers it asserts, and, where the Go test asserts what one of its
 * own servers saw or drives a client of its own, a check written out. Configs and URLs keep
 * Caddy's ports (2999 for the admin API, 9080, 9443, 18080, ...); the runner gives each a free
 * port and replaces it everywhere (see {@linkcode CADDY_PORTS}). `%[name]` in a config stands for
 * the address of the scenario's peer `name` (the Go test's `Sprintf` of a listener's address).
 */
import type { Request, Response } from "./_client.ts";
import type { Peer, PeerSpec } from "./_peers.ts";

/** The fixed ports Caddy's integration tests use; each gets a free port here. */
export const CADDY_PORTS = [
  2999,
  9080,
  9443,
  9081,
  10443,
  1234,
  18080,
  18081,
  18082,
  2020,
  2021,
  2022,
  2023,
  54321,
  3000,
  9000,
  9001,
] as const;

/** A config as the Go test posts it: `Content-Type: text/caddyfile` or `application/json`. */
export interface Config {
  type: "caddyfile" | "json";
  text: string;
}

/** A Caddyfile config. */
export const caddyfile = (text: string): Config => ({ type: "caddyfile", text });
/** A JSON config: the Go test's text, or the same as a value. */
export const json = (value: unknown): Config => ({
  type: "json",
  text: typeof value === "string" ? value : JSON.stringify(value),
});

/** What the runner lends a check. */
export interface Context {
  /** The free port standing for Caddy's `port`. */
  port(port: number): number;
  /** Caddy's ports and peer addresses replaced in `text`. */
  sub(text: string): string;
  /** The scenario's peers. */
  peers: Record<string, Peer>;
  /** The admin API's base URL. */
  admin: string;
  /** The `caddytest/` directory (certificates). */
  caddytest: string;
  /** Sends a request (URL substituted) as the Go test's client. */
  send(r: Request): Promise<Response>;
}

/** An answer as a Go assertion wants it. */
export interface Expect {
  status?: number;
  /** The whole body (`AssertResponse`). */
  body?: string;
  /** A part of the body (`strings.Contains`). */
  contains?: string;
  /** Header values; `null` for "absent". */
  headers?: Record<string, string | null>;
  /** `resp.Location()`, resolved against the request URL (`AssertRedirect`). */
  location?: string;
  /** No answer at all (`err != nil`). */
  fails?: true;
}

/** One step of a scenario. */
export type Step =
  | { init: Config }
  | { loadError: Config; contains: string }
  | { adapt: string; expect: string }
  | { request: Request; expect: Expect }
  | { check: string; run: (ctx: Context) => Promise<void> | void };

/** A Go test function. */
export interface Scenario {
  /** The Go function's name. */
  name: string;
  /** The Go test's own servers, started before the first step. */
  peers?: Record<string, PeerSpec>;
  steps: Step[];
}

/** `InitServer`. */
export const init = (config: Config): Step => ({ init: config });
/** `AssertLoadError`. */
export const loadError = (config: Config, contains: string): Step => ({
  loadError: config,
  contains,
});
/** `AssertAdapt` (the expected JSON as the Go test writes it, indented with tabs). */
export const adapt = (text: string, expect: string): Step => ({ adapt: text, expect });
/** `AssertGetResponse`. */
export const get = (url: string, status: number, body: string, more: Expect = {}): Step => ({
  request: { url },
  expect: { status, body, ...more },
});
/** `AssertRedirect`. */
export const redirect = (url: string, location: string, status: number): Step => ({
  request: { url, noFollow: true },
  expect: { status, location },
});
/** `AssertResponse`/`AssertResponseCode`/`AssertPostResponseBody` and friends. */
export const request = (r: Request, expect: Expect): Step => ({ request: r, expect });
/** A check the Go test writes out. */
export const check = (what: string, run: (ctx: Context) => Promise<void> | void): Step => ({
  check: what,
  run,
});
