import assert from "node:assert/strict";
import {
  accountDeletedEmail,
  accountExistsEmail,
  emailChangedNoticeEmail,
  emailChangeEmail,
  escapeHtml,
  otpEmail,
  passwordResetEmail,
  type RenderedEmail,
  verifyEmail,
} from "../../d1.ts";

const EVIL = `<img src=x onerror="alert('x')">&\r\nBcc: victim@example.com`;

const all: [string, (evil: string) => RenderedEmail][] = [
  ["otpEmail", (e) => otpEmail({ code: e, ttlMinutes: e as never, appName: e })],
  [
    "verifyEmail",
    (e) => verifyEmail({ verifyUrl: `https://example.com/?q=${e}`, ttlHours: 24, appName: e }),
  ],
  [
    "passwordResetEmail",
    (e) =>
      passwordResetEmail({
        resetUrl: `https://example.com/"${e}`,
        ttlHours: e as never,
        appName: e,
      }),
  ],
  [
    "emailChangeEmail",
    (e) =>
      emailChangeEmail({
        confirmUrl: "https://example.com/c",
        newEmail: e,
        ttlHours: 24,
        appName: e,
      }),
  ],
  ["accountDeletedEmail", (e) => accountDeletedEmail({ email: e, appName: e })],
  ["accountExistsEmail", (e) => accountExistsEmail({ appName: e })],
  ["emailChangedNoticeEmail", (e) => emailChangedNoticeEmail({ newEmail: e, appName: e })],
];

Deno.test("templates escape every interpolated value and keep subjects on one line", () => {
  for (const [name, render] of all) {
    const mail = render(EVIL);
    assert.equal(typeof mail.subject, "string", name);
    assert.ok(!/[\r\n]/.test(mail.subject), `${name} subject has a line break`);
    assert.ok(!mail.html.includes("<img"), `${name} html has raw markup`);
    assert.ok(!mail.html.includes(`"alert`), `${name} html has a raw quote`);
    assert.ok(!mail.text.includes("\r"), `${name} text has a CR`);
  }
});

Deno.test("templates use appName and the lifetimes they are given", () => {
  const otp = otpEmail({ code: "042917", ttlMinutes: 10, appName: "Acme" });
  assert.match(otp.subject, /^Acme: /);
  assert.match(otp.text, /042917/);
  assert.match(otp.text, /10 minutes/);
  assert.match(otp.html, /042917/);
  const reset = passwordResetEmail({ resetUrl: "https://e.com/r?token=a&b=1", ttlHours: 2 });
  assert.match(reset.subject, /^Gatehouse: /);
  assert.match(reset.text, /2 hours/);
  assert.ok(reset.html.includes(`href="https://e.com/r?token&#61;a&#38;b&#61;1"`));
  const change = emailChangeEmail({
    confirmUrl: "https://e.com/c",
    newEmail: "n@e.com",
    ttlHours: 24,
  });
  assert.match(change.text, /n@e\.com/);
  assert.match(change.text, /24 hours/);
  assert.match(verifyEmail({ verifyUrl: "https://e.com/v", ttlHours: 48 }).text, /48 hours/);
});

Deno.test("templates never link a non-http URL", () => {
  const mail = passwordResetEmail({ resetUrl: "javascript:alert(1)", ttlHours: 1 });
  assert.ok(!mail.html.includes("href"));
  assert.equal(escapeHtml(`<a href="x">'&`), "&#60;a href&#61;&#34;x&#34;&#62;&#39;&#38;");
});
