/**
 * Parsing of flow parameters at the edge: every flow receives `unknown` and turns it into typed
 * values here, or stops with an error code.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import { MAX_PASSWORD_ITERATIONS } from "../auth/password.ts";
import { fail } from "./errors.ts";
import type { EmailSender, Handoff } from "./email.ts";
import { normalizeEmail } from "./policy.ts";
import { clientKey } from "./throttle.ts";

/** Options every flow that hashes passwords accepts. */
export interface HashingOptions {
  /**
   * PBKDF2 iterations for new password hashes (default: the core's 600,000). Lower values are
   * for tests only; a login rehashes a password stored with another count at this one.
   */
  iterations?: number;
}

/** Options every flow accepts for a deterministic clock in tests. */
export interface ClockOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`). */
  now?: number;
}

/** The params object, or `invalid_input`. @internal */
export function params(p: unknown): Record<string, unknown> {
  if (typeof p !== "object" || p === null || Array.isArray(p)) fail("invalid_input");
  return p as Record<string, unknown>;
}

/** A secret or list of secrets, or `invalid_input`. @internal */
export function secretOf(v: unknown): Secrets {
  if (typeof v === "string" && v.length > 0 && v.length <= 4096) return v;
  if (
    Array.isArray(v) && v.length > 0 && v.length <= 16 &&
    v.every((s) => typeof s === "string" && s.length > 0 && s.length <= 4096)
  ) {
    return v as string[];
  }
  return fail("invalid_input");
}

/** The first (signing) secret. @internal */
export function signingSecret(s: Secrets): string {
  return typeof s === "string" ? s : s[0];
}

/** The injected sender, or `invalid_input`. @internal */
export function senderOf(v: unknown): EmailSender {
  if (typeof v !== "function") fail("invalid_input");
  return v as EmailSender;
}

/** The optional `waitUntil` of a flow that sends e-mail, or `invalid_input`. @internal */
export function waitUntilOf(v: unknown): ((delivery: Promise<unknown>) => void) | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "function") fail("invalid_input");
  return v as (delivery: Promise<unknown>) => void;
}

/** The `waitUntil` and `onSendError` of a flow that sends e-mail, or `invalid_input`. @internal */
export function handoffOf(o: Record<string, unknown>): Handoff {
  const onSendError = o.onSendError;
  if (onSendError !== undefined && typeof onSendError !== "function") fail("invalid_input");
  return {
    waitUntil: waitUntilOf(o.waitUntil),
    onSendError: onSendError as Handoff["onSendError"],
  };
}

/** A normalized e-mail, or `invalid_email` (`invalid_input` when not a string). @internal */
export function emailOf(v: unknown): string {
  if (typeof v !== "string") fail("invalid_input");
  return normalizeEmail(v) ?? fail("invalid_email");
}

/**
 * The optional client of a sign-in (an IP address or device id, at most 200 characters) as a
 * throttle key; "" when absent. @internal
 */
export function clientOf(v: unknown): string {
  if (v === undefined) return "";
  if (typeof v !== "string" || v.length > 200) fail("invalid_input");
  return clientKey(v as string);
}

/** A string of at most `max` characters, or `invalid_input`. @internal */
export function stringOf(v: unknown, max = 4096): string {
  if (typeof v !== "string" || v.length > max) fail("invalid_input");
  return v as string;
}

/** A password string (bounded so huge inputs cost nothing), or `invalid_input`. @internal */
export function passwordOf(v: unknown): string {
  return stringOf(v, 4096);
}

/** The iterations option, or `invalid_input`. @internal */
export function iterationsOf(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || (v as number) < 1 || (v as number) > MAX_PASSWORD_ITERATIONS) {
    fail("invalid_input");
  }
  return v as number;
}

/** The clock option, or `invalid_input`. @internal */
export function nowOf(v: unknown): number {
  if (v === undefined) return Date.now();
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) fail("invalid_input");
  return Math.floor(v as number);
}

/** An optional app name (bounded), else undefined. @internal */
export function appNameOf(v: unknown): string | undefined {
  return typeof v === "string" && v.length <= 200 ? v : undefined;
}

/** A base URL (`http:`/`https:`), or `invalid_input`. @internal */
export function appUrlOf(v: unknown): string {
  if (typeof v !== "string" || v.length > 2048) fail("invalid_input");
  try {
    const u = new URL(v as string);
    if (u.protocol !== "https:" && u.protocol !== "http:") fail("invalid_input");
    return (v as string).replace(/\/+$/, "");
  } catch {
    return fail("invalid_input");
  }
}

/** A link under the site: `appUrl` + `path` + `?token=`. @internal */
export function linkTo(appUrl: string, path: unknown, fallback: string, token: string): string {
  const p = typeof path === "string" && path.length <= 512 && path.startsWith("/")
    ? path
    : fallback;
  return `${appUrl}${p}?token=${encodeURIComponent(token)}`;
}

/** A positive whole number of `unit`s (option override), else the default. @internal */
export function ttlOf(v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || (v as number) < 1 || (v as number) > 10_000) {
    fail("invalid_input");
  }
  return v as number;
}
