import assert from "node:assert/strict";
import { h } from "preact";
import { D1_ERROR_CODES } from "../../d1.ts";
import { renderToString } from "preact-render-to-string";
import {
  defaultStyles,
  describeError,
  ForgotPasswordPage,
  GENERIC_ERROR,
  LoginPage,
  renderAuthDocument,
  RESET_SENT,
  ResetPasswordPage,
  SignupPage,
  SsoButtons,
  VerifyEmailPage,
} from "../../preact.ts";

/** Every `<input>` of the markup as a map of its attributes. */
function inputs(html: string): Record<string, string>[] {
  return [...html.matchAll(/<input\b([^>]*)\/?>/g)].map((m) => attrs(m[1]));
}

function attrs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g)) out[m[1]] = m[2] ?? "";
  return out;
}

/** The text of the `<label for=id>`. */
function labelFor(html: string, id: string): string | undefined {
  return html.match(new RegExp(`<label for="${id}"[^>]*>([^<]*)</label>`))?.[1];
}

function visible(html: string): Record<string, string>[] {
  return inputs(html).filter((i) => i.type !== "hidden");
}

Deno.test("LoginPage: labelled e-mail and current-password fields posting to action", () => {
  const html = renderToString(h(LoginPage, { action: "/site/api/auth/login" }));
  assert.match(html, /<form method="post" action="\/site\/api\/auth\/login"/);
  const [email, password] = visible(html);
  assert.equal(email.type, "email");
  assert.equal(email.name, "email");
  assert.equal(email.autocomplete, "email");
  assert.equal(labelFor(html, email.id), "E-mail");
  assert.equal(password.type, "password");
  assert.equal(password.autocomplete, "current-password");
  assert.equal(labelFor(html, password.id), "Password");
  assert.ok("required" in email && "required" in password);
  assert.match(html, /<button type="submit"[^>]*>Sign in<\/button>/);
  assert.match(html, /<h1[^>]*>Sign in<\/h1>/);
});

Deno.test("LoginPage: default action is /api/auth/login; links only when given", () => {
  const bare = renderToString(h(LoginPage, { title: undefined }));
  assert.match(bare, /action="\/api\/auth\/login"/);
  assert.doesNotMatch(bare, /<nav/);
  const linked = renderToString(h(LoginPage, { signupHref: "/signup", forgotHref: "/forgot" }));
  assert.match(linked, /<a href="\/forgot"[^>]*>Forgot your password\?<\/a>/);
  assert.match(linked, /<a href="\/signup"[^>]*>Create an account<\/a>/);
});

Deno.test("LoginPage: errors live in an aria-live region and are shown in words", () => {
  const html = renderToString(h(LoginPage, { error: "invalid_state" }));
  assert.match(
    html,
    /<div id="gh-login-error" role="alert" aria-live="assertive" aria-atomic="true">/,
  );
  assert.match(html, /<div id="gh-login-notice" role="status" aria-live="polite"/);
  assert.ok(html.includes(describeError("invalid_state")));
  assert.doesNotMatch(html, /invalid_state/);
  for (const input of visible(html)) {
    assert.equal(input["aria-invalid"], "true");
    assert.equal(input["aria-describedby"], "gh-login-error");
  }
  // Without an error the region is present (so later errors are announced) but empty.
  const clean = renderToString(h(LoginPage, { title: undefined }));
  assert.match(
    clean,
    /<div id="gh-login-error" role="alert" aria-live="assertive" aria-atomic="true"><\/div>/,
  );
  assert.doesNotMatch(clean, /aria-invalid/);
});

Deno.test("LoginPage: a hostile oauth_error value is never echoed", () => {
  const raw = '<img src=x onerror="alert(1)">';
  const html = renderToString(h(LoginPage, { error: raw }));
  assert.ok(!html.includes("onerror"));
  assert.ok(!html.includes("&lt;img"));
  assert.ok(html.includes(GENERIC_ERROR));
  assert.equal(describeError("__proto__"), GENERIC_ERROR);
  assert.equal(describeError("toString"), GENERIC_ERROR);
  assert.equal(describeError("invalid_code", { invalid_code: "Nope." }), "Nope.");
});

Deno.test("LoginPage: styles override one element and keep the other defaults", () => {
  const html = renderToString(h(LoginPage, {
    styles: { button: { background: "rgb(1, 2, 3)" }, card: { maxWidth: "40rem" } },
  }));
  const button = html.match(/<button type="submit" style="([^"]*)"/)?.[1] ?? "";
  assert.match(button, /background:rgb\(1, 2, 3\)/);
  assert.match(button, /border-radius:0\.5rem/); // default kept
  assert.doesNotMatch(button, /#1d4ed8/);
  assert.match(html, /max-width:40rem/);
  // Inputs keep the default look.
  assert.match(visible(html)[0].style, /border:1px solid #6b7280/);
  // Defaults never remove the focus outline.
  for (const style of Object.values(defaultStyles)) assert.ok(!("outline" in style));
});

Deno.test("LoginPage: ssoSlot renders under an 'or' line; next and email round-trip", () => {
  const html = renderToString(h(LoginPage, {
    ssoSlot: h(SsoButtons, { providers: ["google", "github", "microsoft"] }),
    next: "/dashboard",
    email: "ada@example.com",
  }));
  assert.match(html, /<p style="[^"]*">or<\/p>/);
  assert.match(html, /href="\/api\/auth\/oauth\/google\/start"[^>]*>Continue with Google</);
  assert.match(html, /href="\/api\/auth\/oauth\/github\/start"[^>]*>Continue with GitHub</);
  assert.match(html, /href="\/api\/auth\/oauth\/microsoft\/start"[^>]*>Continue with Microsoft</);
  const hidden = inputs(html).find((i) => i.type === "hidden");
  assert.deepEqual([hidden?.name, hidden?.value], ["next", "/dashboard"]);
  assert.equal(visible(html)[0].value, "ada@example.com");
});

Deno.test("SsoButtons: base path, template, labels, styles; nothing for no providers", () => {
  const html = renderToString(h(SsoButtons, {
    providers: ["github", "a b"],
    basePath: "/owner",
    labels: { "a b": "Acme" },
    styles: { ssoButton: { color: "rgb(9, 9, 9)" } },
  }));
  assert.match(html, /href="\/owner\/api\/auth\/oauth\/github\/start"/);
  assert.match(html, /href="\/owner\/api\/auth\/oauth\/a%20b\/start"[^>]*>Continue with Acme</);
  assert.match(html, /color:rgb\(9, 9, 9\)/);
  const relay = renderToString(h(SsoButtons, {
    providers: ["google"],
    hrefTemplate: "/relay/start?provider={provider}",
  }));
  assert.match(relay, /href="\/relay\/start\?provider=google"/);
  assert.equal(renderToString(h(SsoButtons, { providers: [] })), "");
});

Deno.test("SignupPage: e-mail + new-password with a minimum length", () => {
  const html = renderToString(h(SignupPage, { loginHref: "/login" }));
  assert.match(html, /action="\/api\/auth\/signup"/);
  const [email, password] = visible(html);
  assert.equal(email.autocomplete, "email");
  assert.equal(password.autocomplete, "new-password");
  assert.equal(password.minlength, "8");
  assert.equal(labelFor(html, password.id), "Password");
  assert.match(html, /href="\/login"/);
});

Deno.test("ForgotPasswordPage: e-mail field; the sent state says the neutral sentence", () => {
  const html = renderToString(h(ForgotPasswordPage, { loginHref: "/login" }));
  assert.match(html, /action="\/api\/auth\/forgot"/);
  const [email] = visible(html);
  assert.equal(email.autocomplete, "email");
  assert.equal(labelFor(html, email.id), "E-mail");
  assert.ok(!html.includes(RESET_SENT));
  const sent = renderToString(h(ForgotPasswordPage, { sent: true }));
  assert.ok(sent.includes(RESET_SENT));
  assert.match(sent, /role="status" aria-live="polite"/);
});

Deno.test("ResetPasswordPage: hidden token and a new-password field", () => {
  const html = renderToString(h(ResetPasswordPage, { token: 'a"b<c', loginHref: "/login" }));
  assert.match(html, /action="\/api\/auth\/reset"/);
  const token = inputs(html).find((i) => i.name === "token");
  assert.equal(token?.type, "hidden");
  assert.equal(token?.value, "a&quot;b&lt;c"); // escaped in the attribute
  const [password] = visible(html);
  assert.equal(password.autocomplete, "new-password");
  assert.equal(labelFor(html, password.id), "New password");
  const failed = renderToString(h(ResetPasswordPage, { token: "t", error: "invalid_token" }));
  assert.ok(failed.includes(describeError("invalid_token")));
});

Deno.test("VerifyEmailPage: read-only e-mail and a one-time-code field", () => {
  const html = renderToString(h(VerifyEmailPage, { email: "ada@example.com" }));
  assert.match(html, /action="\/api\/auth\/verify"/);
  const [email, code] = visible(html);
  assert.equal(email.value, "ada@example.com");
  assert.ok("readonly" in email);
  assert.equal(code.autocomplete, "one-time-code");
  assert.equal(code.inputmode, "numeric");
  assert.equal(labelFor(html, code.id), "Code");
  const open = renderToString(h(VerifyEmailPage, { title: undefined }));
  assert.ok(!("readonly" in visible(open)[0]));
});

Deno.test("every page: each visible input has a label and a distinct id", () => {
  const pages = [
    renderToString(h(LoginPage, { title: undefined })),
    renderToString(h(SignupPage, { title: undefined })),
    renderToString(h(ForgotPasswordPage, { title: undefined })),
    renderToString(h(ResetPasswordPage, { token: "t" })),
    renderToString(h(VerifyEmailPage, { title: undefined })),
  ];
  const ids = new Set<string>();
  for (const html of pages) {
    for (const input of visible(html)) {
      assert.ok(input.id && !ids.has(input.id), `unique id ${input.id}`);
      ids.add(input.id);
      assert.ok(labelFor(html, input.id), `label for ${input.id}`);
      assert.ok(input.autocomplete, `autocomplete on ${input.id}`);
    }
    assert.match(html, /aria-live="assertive"/);
  }
});

Deno.test("renderAuthDocument: whole page with embedded, script-safe props", () => {
  const html = renderAuthDocument(
    {
      page: "login",
      props: { action: "/x", next: "</script><script>alert(1)</script>" },
      sso: { providers: ["github"] },
    },
    { scriptSrc: "/auth-client.js", title: "Sign in & go" },
  );
  assert.ok(html.startsWith('<!doctype html><html lang="en">'));
  assert.match(html, /<title>Sign in &amp; go<\/title>/);
  assert.match(html, /<div id="gatehouse-auth"><main/);
  assert.match(html, /<script type="module" src="\/auth-client.js"><\/script>/);
  const data = html.match(
    /<script type="application\/json" id="gatehouse-auth-data">(.*?)<\/script>/,
  )?.[1];
  assert.ok(data);
  assert.ok(!data.includes("<"));
  assert.deepEqual(JSON.parse(data).props.next, "</script><script>alert(1)</script>");
  assert.equal(html.match(/<script/g)?.length, 2);
  assert.match(html, /Continue with GitHub/);
  const plain = renderAuthDocument({ page: "verify", props: {} });
  assert.match(plain, /<title>Check your e-mail<\/title>/);
  assert.doesNotMatch(plain, /type="module"/);
});

Deno.test("describeError: every /d1 flow and OAuth callback code has its own sentence", () => {
  const codes = [
    ...D1_ERROR_CODES,
    "not_configured",
    "invalid_state",
    "access_denied",
    "provider_error",
    "invalid_request",
    "exchange_failed",
    "profile_failed",
    "forbidden",
    "relay_invalid",
    "network",
  ];
  for (const code of codes) assert.notEqual(describeError(code), GENERIC_ERROR, code);
});
