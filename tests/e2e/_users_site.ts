/**
 * Steps on the reference app's multi-user site (`/users`) over real HTTP, for tests that run
 * the app as a process: sign-up, the code or link from the development outbox, verification,
 * sign-in. Every step is a browser's request (cookies kept by `Browser`); answers are the
 * site's JSON answers (no `Accept: text/html`), so statuses are the site's own.
 */
import assert from "node:assert/strict";
import { Browser } from "../app/_relay_harness.ts";

export { Browser };

/** The newest message of the development outbox sent to `email`, as text. */
export async function newestMail(origin: string, email: string): Promise<string | null> {
  const page = await (await fetch(`${origin}/users/outbox`)).text();
  for (const article of page.split("<article").slice(1)) {
    const to = /<strong class="to">([^<]*)<\/strong>/.exec(article)?.[1];
    if (to !== email) continue;
    const text = /<pre class="text"[^>]*>([\s\S]*?)<\/pre>/.exec(article)?.[1] ?? "";
    return text.replace(/<[^>]+>/g, "").replace(/&#(\d+);/g, (_, n) => String.fromCharCode(+n));
  }
  return null;
}

/** How many outbox messages went to `email`. */
export async function mailsTo(origin: string, email: string): Promise<number> {
  const page = await (await fetch(`${origin}/users/outbox`)).text();
  return page.split(`<strong class="to">${email}</strong>`).length - 1;
}

/** The 6-digit code of the newest message to `email`. */
export async function newestCode(origin: string, email: string): Promise<string> {
  const code = /verification code is (\d{6})/.exec(await newestMail(origin, email) ?? "")?.[1];
  assert.ok(code, `no code for ${email} in the outbox`);
  return code;
}

/** The reset token of the newest message to `email`. */
export async function newestResetToken(origin: string, email: string): Promise<string> {
  const link = /https?:\/\/\S+\/users\/reset\?token=\S+/.exec(
    await newestMail(origin, email) ?? "",
  )?.[0];
  assert.ok(link, `no reset link for ${email} in the outbox`);
  return new URL(link).searchParams.get("token")!;
}

/** A request's result: the status, `Retry-After`, the JSON body. */
export interface Answer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

/** Posts JSON from `b` (with extra headers, e.g. `X-Forwarded-For`). */
export async function postJson(
  b: Browser,
  path: string,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const target = new URL(path, b.origin);
  const h = new Headers({
    "content-type": "application/json",
    accept: "application/json",
    ...headers,
  });
  if (b.cookies.size) h.set("cookie", [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
  const res = await fetch(target, {
    method: "POST",
    headers: h,
    body: JSON.stringify(body),
    redirect: "manual",
  });
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(";")[0];
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (value === "" || /max-age=0/i.test(line)) b.cookies.delete(name);
    else b.cookies.set(name, value);
  }
  const text = await res.text();
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: text.startsWith("{") ? JSON.parse(text) : { text },
  };
}

/** Signs up `email` from `b`; the signup's attempt stays in `b`'s cookie. */
export async function signUp(b: Browser, email: string, password: string): Promise<void> {
  const r = await postJson(b, "/users/api/auth/signup", { email, password });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

/** Signs up and verifies `email` from `b`, which is then signed in. */
export async function newUser(b: Browser, email: string, password: string): Promise<void> {
  await signUp(b, email, password);
  const code = await newestCode(b.origin, email);
  const v = await postJson(b, "/users/api/auth/verify", { email, code });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  assert.ok(b.cookies.has("__Host-users-session"));
}

/** Signs in from `b` with a password. */
export function signIn(
  b: Browser,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return postJson(b, "/users/api/auth/login", { email, password }, headers);
}

/** A second browser holding a copy of `b`'s cookies (another tab, or a stolen cookie). */
export function copyOf(b: Browser): Browser {
  const copy = new Browser(b.origin);
  copy.cookies = new Map(b.cookies);
  return copy;
}

/** Whether `b` is signed in to the users site (its page answers 200, not a 302 to sign-in). */
export async function signedIn(b: Browser, path = "/users/"): Promise<boolean> {
  const r = await b.get(path);
  if (r.status === 200) return true;
  assert.equal(r.status, 302, `${path}: ${r.status}`);
  return false;
}
