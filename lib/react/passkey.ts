/**
 * The browser side of passkeys, a few lines over `navigator.credentials` (no dependency): the
 * site's options (JSON with base64url fields, as `/d1`'s passkey flows answer them) become
 * the `ArrayBuffer`s WebAuthn wants, and the credential goes back as JSON (the shape of
 * `PublicKeyCredential.toJSON()`). Each ceremony is two requests to the site: `POST` to the
 * options action (the site answers `{options}` and keeps the ceremony in a cookie), then
 * `POST` of `{response}` to the verify action.
 *
 * @module
 */
import type { AuthResult } from "./form.ts";

/** Where a passkey ceremony's two requests go. */
export interface PasskeyActions {
  /** Answers the ceremony's options: `{options}` (and sets the ceremony cookie). */
  optionsAction: string;
  /** Takes `{response, name?}` and answers like a form action (`{ok, redirect}` or `{error}`). */
  verifyAction: string;
}

type Json = Record<string, unknown>;
// deno-lint-ignore no-explicit-any
type Any = any;

function fromB64url(s: string): ArrayBuffer {
  const b64 = s.replaceAll("-", "+").replaceAll("_", "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

function toB64url(buf: ArrayBuffer | ArrayBufferView | null | undefined): string | undefined {
  if (!buf) return undefined;
  const bytes = buf instanceof ArrayBuffer
    ? new Uint8Array(buf)
    : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const list = (v: unknown) => (Array.isArray(v) ? v : []) as Json[];

/** `PublicKeyCredentialCreationOptions` from their JSON. */
function creationOptions(o: Json): Any {
  const user = o.user as Json;
  return {
    ...o,
    challenge: fromB64url(String(o.challenge)),
    user: { ...user, id: fromB64url(String(user.id)) },
    excludeCredentials: list(o.excludeCredentials).map((c) => ({
      ...c,
      id: fromB64url(String(c.id)),
    })),
  };
}

/** `PublicKeyCredentialRequestOptions` from their JSON. */
function requestOptions(o: Json): Any {
  return {
    ...o,
    challenge: fromB64url(String(o.challenge)),
    allowCredentials: list(o.allowCredentials).map((c) => ({
      ...c,
      id: fromB64url(String(c.id)),
    })),
  };
}

/** A credential as JSON: its own `toJSON()` where the browser has it, else built here. */
function credentialJson(cred: Any): Json {
  if (typeof cred.toJSON === "function") return cred.toJSON();
  const r = cred.response;
  const response: Json = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    const handle = toB64url(r.userHandle);
    if (handle) response.userHandle = handle;
  }
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
    clientExtensionResults: cred.getClientExtensionResults?.() ?? {},
    response,
  };
}

async function post(url: string, body: Json): Promise<{ ok: boolean; answer: Json }> {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  let answer: Json = {};
  try {
    answer = await res.json();
  } catch {
    answer = {};
  }
  return { ok: res.ok, answer };
}

/** Whether this browser can use passkeys at all. */
export function passkeysAvailable(): boolean {
  return typeof (globalThis as Any).PublicKeyCredential === "function" &&
    typeof (globalThis.navigator as Any)?.credentials?.get === "function";
}

/** Whether this browser offers passkeys in the autofill list (conditional mediation). */
export async function autofillAvailable(): Promise<boolean> {
  const pkc = (globalThis as Any).PublicKeyCredential;
  if (!passkeysAvailable() || typeof pkc.isConditionalMediationAvailable !== "function") {
    return false;
  }
  try {
    return await pkc.isConditionalMediationAvailable();
  } catch {
    return false;
  }
}

/** A ceremony's outcome: the site's answer, or the code of what went wrong. */
export type PasskeyOutcome = { ok: true; answer: AuthResult } | { ok: false; error: string };

let pending: AbortController | null = null;

/**
 * Signs in with a passkey: the site's options, `navigator.credentials.get`, the answer to the
 * site. With `autofill`, waits for the user to pick a passkey in the username field's
 * autofill list (conditional mediation); a later call (a button) cancels that wait. A
 * cancelled prompt is `{ok:false, error:"cancelled"}`.
 */
export async function passkeySignIn(
  actions: PasskeyActions,
  o: { autofill?: boolean } = {},
): Promise<PasskeyOutcome> {
  pending?.abort();
  const controller = new AbortController();
  pending = controller;
  try {
    const start = await post(actions.optionsAction, {});
    if (!start.ok || typeof start.answer.options !== "object") {
      return { ok: false, error: String(start.answer.error ?? "invalid_challenge") };
    }
    const cred = await (navigator as Any).credentials.get({
      publicKey: requestOptions(start.answer.options as Json),
      mediation: o.autofill ? "conditional" : undefined,
      signal: controller.signal,
    });
    if (!cred) return { ok: false, error: "cancelled" };
    const done = await post(actions.verifyAction, { response: credentialJson(cred) });
    return done.ok
      ? { ok: true, answer: done.answer as AuthResult }
      : { ok: false, error: String(done.answer.error ?? "invalid_passkey") };
  } catch (e) {
    const name = (e as { name?: string })?.name;
    return {
      ok: false,
      error: name === "NotAllowedError" || name === "AbortError" ? "cancelled" : "network",
    };
  } finally {
    if (pending === controller) pending = null;
  }
}

/**
 * Adds a passkey to the signed-in account: the site's options, `navigator.credentials.create`,
 * the answer (with the name the user gave) to the site.
 */
export async function passkeyRegister(
  actions: PasskeyActions,
  o: { name?: string } = {},
): Promise<PasskeyOutcome> {
  pending?.abort();
  try {
    const start = await post(actions.optionsAction, {});
    if (!start.ok || typeof start.answer.options !== "object") {
      return { ok: false, error: String(start.answer.error ?? "invalid_challenge") };
    }
    const cred = await (navigator as Any).credentials.create({
      publicKey: creationOptions(start.answer.options as Json),
    });
    if (!cred) return { ok: false, error: "cancelled" };
    const done = await post(actions.verifyAction, {
      response: credentialJson(cred),
      ...(o.name ? { name: o.name } : {}),
    });
    return done.ok
      ? { ok: true, answer: done.answer as AuthResult }
      : { ok: false, error: String(done.answer.error ?? "invalid_passkey") };
  } catch (e) {
    const name = (e as { name?: string })?.name;
    return {
      ok: false,
      error: name === "NotAllowedError" || name === "AbortError"
        ? "cancelled"
        : name === "InvalidStateError"
        ? "passkey_exists"
        : "network",
    };
  }
}
