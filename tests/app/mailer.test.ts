import assert from "node:assert/strict";
import { httpMailSender, MailerError, mailSenderFromEnv } from "../../app/mailer.ts";
import { loadAppEnv } from "../../app/env.ts";

/** A loopback stand-in for the mail API that records what it receives. */
function fakeMailApi(status = 200) {
  const seen: { auth: string | null; body: unknown }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({ auth: req.headers.get("authorization"), body: await req.json() });
    return Response.json(status === 200 ? { id: "msg_1" } : { message: "nope" }, { status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/emails`, seen, server };
}

Deno.test("mailer: posts {from, to, subject, html, text} with the bearer key", async () => {
  const api = fakeMailApi();
  try {
    const send = httpMailSender({
      from: "Gatehouse <no-reply@example.com>",
      apiKey: "re_key",
      url: api.url,
    });
    const result = await send({
      to: "ada@example.com",
      subject: "Hi",
      html: "<p>Hi</p>",
      text: "Hi",
    });
    assert.deepEqual(result, { id: "msg_1" });
    assert.deepEqual(api.seen, [{
      auth: "Bearer re_key",
      body: {
        from: "Gatehouse <no-reply@example.com>",
        to: ["ada@example.com"],
        subject: "Hi",
        html: "<p>Hi</p>",
        text: "Hi",
      },
    }]);
  } finally {
    await api.server.shutdown();
  }
});

Deno.test("mailer: a rejection throws mail_rejected without the key in the message", async () => {
  const api = fakeMailApi(422);
  try {
    const send = httpMailSender({ from: "a@example.com", apiKey: "re_secret_key", url: api.url });
    let error: unknown = null;
    try {
      await send({ to: "b@example.com", subject: "s", html: "h", text: "t" });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof MailerError);
    assert.equal(error.code, "mail_rejected");
    assert.equal(error.status, 422);
    assert.ok(!error.message.includes("re_secret_key"));
  } finally {
    await api.server.shutdown();
  }
});

Deno.test("mailer: from the environment only with MAIL_API_KEY, and MAIL_FROM is required", () => {
  assert.equal(mailSenderFromEnv(loadAppEnv({})), null);
  assert.throws(() => mailSenderFromEnv(loadAppEnv({ MAIL_API_KEY: "k" })), MailerError);
  assert.equal(
    typeof mailSenderFromEnv(loadAppEnv({ MAIL_API_KEY: "k", MAIL_FROM: "a@b.c" })),
    "function",
  );
});
