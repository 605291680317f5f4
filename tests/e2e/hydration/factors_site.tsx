/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/**
 * The React build's factor pages on a real site, for `tests/e2e/react_factors.test.ts`: run
 * as its own process under React 19's import map plus `/d1`'s packages (the test writes that
 * map):
 *
 *     deno run -A --no-config --import-map <map> factors_site.tsx <map> <database url>
 *
 * The login page (with passkeys: the button and the e-mail field's autofill), the second step,
 * the TOTP set-up and the backup codes are `renderAuthDocument` documents of the React build,
 * hydrated in the browser by its `hydrateAuthPage` with `react-dom` (`client_factors.tsx`);
 * the account page adds a passkey with the React build's `PasskeyRegister`. Every answer
 * comes from the `/d1` flows on a libSQL database, as docs/react.md says a site does: 303
 * redirects for a plain form post, JSON for `fetch`. One account exists from the start
 * (`ada@example.com`, the password below). Prints `listening <origin> <React version>`; the
 * origin is `http://localhost:<port>`, the relying party `localhost`.
 */
import { version as reactVersion } from "react";
import { renderToString } from "react-dom/server";
import { type AuthPageData, renderAuthDocument } from "@gatehouse/gatehouse/react";
import {
  applySchema,
  confirmTotpEnrolment,
  createUserSession,
  listPasskeys,
  login,
  openLibsql,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  readUserSession,
  signup,
  startTotpEnrolment,
  totpQrSvg,
  verifyOtp,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
  verifySecondFactor,
} from "@gatehouse/gatehouse/d1";

/** The account's password. */
export const PASSWORD = "react factor pages passphrase";
const EMAIL = "ada@example.com";
const SECRET = "token secret of the React factor site, long enough";
const SESSION = { secret: "session secret of the React factor site", cookieName: "__Host-s" };
const TICKET = "__Host-ticket";
const CEREMONY = "__Host-ceremony";

const [importMap, databaseUrl] = Deno.args;
if (!importMap || !databaseUrl) {
  throw new Error("usage: factors_site.tsx <import map> <database url>");
}
const db = openLibsql(databaseUrl);
await applySchema(db);
const mailed = Promise.withResolvers<string>();
const s = await signup(db, {
  email: EMAIL,
  password: PASSWORD,
  secret: SECRET,
  iterations: 1000,
  sendEmail: (m) => mailed.resolve(m.text.match(/\b(\d{6})\b/)?.[1] ?? ""),
});
if (!s.ok) throw new Error(`signup: ${s.error}`);
const code = await mailed.promise; // the code is e-mailed after the answer
const v = await verifyOtp(db, { email: EMAIL, code, attempt: s.attempt, secret: SECRET });
if (!v.ok) throw new Error(`verify: ${v.error}`);

async function bundle(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-factors-react-" });
  try {
    const out = `${dir}/client.js`;
    const entry = new URL("client_factors.tsx", import.meta.url).pathname;
    const { success, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "--no-config",
        "--import-map",
        importMap,
        "-o",
        out,
        entry,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!success) throw new Error(`deno bundle failed: ${new TextDecoder().decode(stderr)}`);
    return await Deno.readTextFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
const client = await bundle();

const html = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...headers,
    },
  });
const page = (data: AuthPageData) =>
  html(renderAuthDocument(data, { renderToString, scriptSrc: "/client.js" }));
const cookieOf = (req: Request, name: string) =>
  (req.headers.get("cookie") ?? "").split(/;\s*/).find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1) ?? "";
const setCookie = (name: string, value: string, maxAge: number) =>
  `${name}=${value}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;

/** The site's answer: a redirect for a plain form post, JSON for `fetch`. */
function answer(
  req: Request,
  r: { next: string; body?: Record<string, unknown> } | { error: string; status: number },
  headers: Headers = new Headers(),
): Response {
  const plain = (req.headers.get("accept") ?? "").includes("text/html");
  if ("error" in r) {
    if (!plain) {
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify({ error: r.error }), { status: r.status, headers });
    }
    const back = new URL(req.headers.get("referer") ?? "/login");
    back.searchParams.set("error", r.error);
    headers.set("location", back.pathname + back.search);
    return new Response(null, { status: 303, headers });
  }
  if (!plain) {
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify({ ok: true, redirect: r.next, ...r.body }), { headers });
  }
  headers.set("location", r.next);
  return new Response(null, { status: 303, headers });
}

const STATUS: Record<string, number> = { too_many_attempts: 429, invalid_code: 401 };

async function signedIn(headers: Headers, req: Request, userId: string, method: string) {
  const c = await createUserSession(db, {
    session: SESSION,
    userId,
    record: { userAgent: req.headers.get("user-agent") ?? "", method },
  });
  if (c.ok) headers.append("set-cookie", c.setCookie);
}

function rp(req: Request) {
  const origin = new URL(req.url).origin.replace("127.0.0.1", "localhost");
  return { id: "localhost", name: "React factor site", origin };
}

function accountPage(email: string, passkeys: string[]): Response {
  const actions = JSON.stringify({
    optionsAction: "/account/passkeys/options",
    verifyAction: "/account/passkeys/verify",
  });
  const body = renderToString(
    <main>
      <h1>Your account</h1>
      <p>Signed in as {email}</p>
      <h2>Passkeys</h2>
      {passkeys.length
        ? <ul aria-label="Your passkeys">{passkeys.map((p) => <li key={p}>{p}</li>)}</ul>
        : <p>No passkey yet.</p>}
      <div id="passkey-register" />
      <p>
        <a href="/totp-setup">Set up an authenticator app</a>
      </p>
    </main>,
  );
  return html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Your account</title>` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>${body}` +
      `<script type="application/json" id="passkey-register-data">${actions}</script>` +
      `<script type="module" src="/client.js"></script></body></html>`,
  );
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const url = new URL(req.url);
  const path = url.pathname;
  const error = url.searchParams.get("error") ?? undefined;
  const form = async () =>
    Object.fromEntries([...(await req.formData())].map(([k, v]) => [k, String(v)]));
  const me = () => readUserSession(db, { session: SESSION, request: req, recorded: true });
  if (req.method === "GET") {
    switch (path) {
      case "/client.js":
        return new Response(client, { headers: { "content-type": "text/javascript" } });
      case "/login":
        return page({
          page: "login",
          props: {
            action: "/api/auth/login",
            error,
            passkey: {
              optionsAction: "/api/auth/passkey/options",
              verifyAction: "/api/auth/passkey/verify",
            },
          },
        });
      case "/second-factor":
        return page({
          page: "second-factor",
          props: { action: "/api/auth/second-factor", loginHref: "/login", error },
        });
      case "/account": {
        const m = await me();
        if (!m) return Response.redirect(new URL("/login", url), 302);
        const list = await listPasskeys(db, m.user.id);
        return accountPage(m.user.email, list.ok ? list.passkeys.map((p) => p.name) : []);
      }
      case "/totp-setup": {
        const m = await me();
        if (!m) return Response.redirect(new URL("/login", url), 302);
        const t = await startTotpEnrolment(db, {
          userId: m.user.id,
          session: m.session,
          secret: SECRET,
          issuer: "React factor site",
        });
        if (!t.ok) return html(`enrolment: ${t.error}`, 500);
        return page({
          page: "totp-setup",
          props: {
            action: "/api/auth/totp/confirm",
            qrSvg: totpQrSvg(t.uri, { title: "QR code to scan with an authenticator app" }),
            secret: t.secret,
            continueHref: "/account",
            error,
          },
        });
      }
    }
    return new Response("not found", { status: 404 });
  }
  if (req.method !== "POST") return new Response("method not allowed", { status: 405 });
  const headers = new Headers();
  switch (path) {
    case "/api/auth/login": {
      const f = await form();
      const r = await login(db, {
        email: f.email ?? "",
        password: f.password ?? "",
        secret: SECRET,
        iterations: 1000,
      });
      if (!r.ok && "ticket" in r && r.ticket) {
        headers.append("set-cookie", setCookie(TICKET, r.ticket, 300));
        return answer(req, { next: "/second-factor" }, headers);
      }
      if (!r.ok) return answer(req, { error: r.error, status: 401 });
      await signedIn(headers, req, r.userId, "password");
      return answer(req, { next: "/account" }, headers);
    }
    case "/api/auth/second-factor": {
      const f = await form();
      const r = await verifySecondFactor(db, {
        ticket: cookieOf(req, TICKET),
        code: f.code ?? "",
        secret: SECRET,
      });
      if (!r.ok) return answer(req, { error: r.error, status: STATUS[r.error] ?? 400 });
      headers.append("set-cookie", setCookie(TICKET, "", 0));
      await signedIn(headers, req, r.userId, r.method);
      return answer(req, { next: "/account" }, headers);
    }
    case "/api/auth/totp/confirm": {
      const m = await me();
      if (!m) return answer(req, { error: "reauth_required", status: 403 });
      const r = await confirmTotpEnrolment(db, {
        userId: m.user.id,
        code: (await form()).code ?? "",
        secret: SECRET,
      });
      if (!r.ok) return answer(req, { error: r.error, status: STATUS[r.error] ?? 400 });
      if (!(req.headers.get("accept") ?? "").includes("text/html")) {
        return Response.json({ ok: true, backupCodes: r.backupCodes });
      }
      return page({
        page: "backup-codes",
        props: { codes: r.backupCodes, continueHref: "/account", appName: "React factor site" },
      });
    }
    case "/api/auth/passkey/options": {
      const r = await passkeySignInOptions(db, { rp: rp(req) });
      if (!r.ok) return Response.json({ error: r.error }, { status: 500 });
      headers.append("set-cookie", setCookie(CEREMONY, r.ceremony, 300));
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify({ options: r.options }), { headers });
    }
    case "/api/auth/passkey/verify": {
      const body = await req.json().catch(() => ({}));
      const r = await verifyPasskeySignIn(db, {
        ceremony: cookieOf(req, CEREMONY),
        response: body?.response,
        rp: rp(req),
      });
      if (!r.ok) return answer(req, { error: r.error, status: 401 });
      await signedIn(headers, req, r.userId, "passkey");
      return answer(req, { next: "/account" }, headers);
    }
    case "/account/passkeys/options": {
      const m = await me();
      if (!m) return Response.json({ error: "reauth_required" }, { status: 403 });
      const r = await passkeyRegistrationOptions(db, {
        userId: m.user.id,
        session: m.session,
        rp: rp(req),
      });
      if (!r.ok) return Response.json({ error: r.error }, { status: 400 });
      headers.append("set-cookie", setCookie(CEREMONY, r.ceremony, 300));
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify({ options: r.options }), { headers });
    }
    case "/account/passkeys/verify": {
      const m = await me();
      if (!m) return Response.json({ error: "reauth_required" }, { status: 403 });
      const body = await req.json().catch(() => ({}));
      const r = await verifyPasskeyRegistration(db, {
        userId: m.user.id,
        session: m.session,
        ceremony: cookieOf(req, CEREMONY),
        response: body?.response,
        name: typeof body?.name === "string" ? body.name : undefined,
        rp: rp(req),
      });
      if (!r.ok) return answer(req, { error: r.error, status: 400 });
      return answer(req, { next: "/account?added=1" });
    }
  }
  return new Response("not found", { status: 404 });
});
console.log(`listening http://localhost:${server.addr.port} ${reactVersion}`);
