/**
 * Body limits of the reference app and the mail API, against the app as a real process over
 * raw sockets: a declared length over the limit is answered 413 before a byte of the body is
 * sent; a chunked body that never ends is answered 413 once it passes the limit; a body at the
 * limit is served. The 50 MiB anonymous sign-in post leaves the process's memory flat.
 */
import assert from "node:assert/strict";
import { type AppProcess, startAppProcess } from "./_process.ts";
import { rawRequest, type RawResponse, readResponse, writeAll } from "../app/_raw.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const KiB = 1024;
const MiB = 1024 * KiB;
const OPERATOR = "body-limit-operator-token-0123456789";
const encoder = new TextEncoder();

interface Case {
  method: string;
  path: string;
  limit: number;
  headers?: Record<string, string>;
  /** What the right-sized body gets instead of 413. */
  ok: number[];
}

const form = { "content-type": "application/x-www-form-urlencoded" };
const jsonType = { "content-type": "application/json" };
const operator = { authorization: `Bearer ${OPERATOR}` };

const CASES: Case[] = [
  { method: "POST", path: "/owner/api/auth/login", limit: 16 * KiB, headers: form, ok: [401] },
  { method: "POST", path: "/users/api/auth/login", limit: 16 * KiB, headers: form, ok: [401] },
  { method: "POST", path: "/users/api/auth/signup", limit: 16 * KiB, headers: form, ok: [400] },
  {
    method: "POST",
    path: "/relay-demo/api/auth/logout",
    limit: 16 * KiB,
    headers: form,
    ok: [302],
  },
  { method: "POST", path: "/dev-idp/google/token", limit: 16 * KiB, headers: form, ok: [400] },
  { method: "GET", path: "/broker/", limit: 16 * KiB, ok: [200] },
  { method: "POST", path: "/", limit: 16 * KiB, headers: form, ok: [404] },
  // the console takes a whole config or Gatehousefile: 1 MiB
  { method: "POST", path: "/admin/api/auth/login", limit: MiB, headers: form, ok: [401] },
  {
    method: "PUT",
    path: "/api/account-docs/v2/user-defined-rules/update-system-user-defined-rule",
    limit: 64 * KiB,
    headers: jsonType,
    ok: [401],
  },
  {
    method: "POST",
    path: "/api/account-docs/v2/mailroom/accounts",
    limit: 64 * KiB,
    headers: { ...jsonType, ...operator },
    ok: [422],
  },
  {
    method: "POST",
    path: "/api/account-docs/v2/mailroom/items",
    limit: 20 * MiB,
    headers: { "content-type": "multipart/form-data; boundary=x", ...operator },
    ok: [422],
  },
];

function head(c: Case, length: number | "chunked"): string[] {
  const lines = [`${c.method} ${c.path} HTTP/1.1`, "Host: 127.0.0.1", "Accept: application/json"];
  for (const [k, v] of Object.entries(c.headers ?? {})) lines.push(`${k}: ${v}`);
  lines.push(length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`);
  return lines;
}

/**
 * Sends the head, then streams body bytes (raw, or as 64 KiB chunks) until the answer comes or
 * `cap` bytes went out; never sends the end of the body. Returns the answer (null if none came
 * before the cap) and how many body bytes were written.
 */
async function streamUntilAnswer(
  port: number,
  lines: string[],
  chunked: boolean,
  cap: number,
): Promise<{ answer: RawResponse | null; sent: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let answer: RawResponse | null = null;
  const reading = readResponse(conn).then((r) => (answer = r), () => null);
  let sent = 0;
  try {
    await writeAll(conn, encoder.encode(lines.join("\r\n") + "\r\n\r\n"));
    const data = new Uint8Array(64 * KiB).fill(0x61);
    const frame = chunked
      ? new Uint8Array([...encoder.encode("10000\r\n"), ...data, ...encoder.encode("\r\n")])
      : data;
    const writing = (async () => {
      while (answer === null && sent < cap) {
        await writeAll(conn, frame);
        sent += data.length;
      }
    })().catch(() => {/* the server closed: the answer tells why */});
    await Promise.race([reading, writing]);
    await reading; // the writer stopped: at the cap, or the server closed the connection
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
  return { answer, sent };
}

/**
 * Runs `fn` against the app; the mail API's answers it passes to `mail` are checked against
 * the API's OpenAPI document at the end.
 */
async function withApp(
  fn: (app: AppProcess, mail: (c: Case, res: RawResponse) => Promise<void>) => Promise<void>,
): Promise<void> {
  const app = await startAppProcess({ MAIL_OPERATOR_TOKEN: OPERATOR });
  const checker = new ResponseChecker();
  const mail = async (c: Case, res: RawResponse) => {
    if (!c.path.startsWith("/api/account-docs/")) return;
    await checker.checkRaw({ method: c.method, url: `http://127.0.0.1${c.path}` }, res);
  };
  try {
    await fn(app, mail);
    checker.assertClean();
  } finally {
    await app.close();
  }
}

Deno.test({
  name: "body limits: a Content-Length over the limit is answered 413 before the body is sent",
  ...opts,
  async fn() {
    await withApp(async (app, mail) => {
      for (const c of CASES) {
        // Nothing of the body is ever sent: an answer proves the server did not wait for it.
        const res = await rawRequest(app.port, head(c, c.limit + 1));
        await mail(c, res);
        assert.equal(res.status, 413, `${c.method} ${c.path}: ${res.body}`);
        const body = JSON.parse(res.body);
        if (c.path.startsWith("/api/account-docs")) assert.equal(body.code, 19, c.path);
        else assert.deepEqual(body, { error: "body_too_large", limit: c.limit }, c.path);
      }
    });
  },
});

Deno.test({
  name: "body limits: a chunked body without end is answered 413 once past the limit",
  ...opts,
  async fn() {
    await withApp(async (app, mail) => {
      for (const c of CASES) {
        const cap = c.limit + 48 * MiB;
        const { answer, sent } = await streamUntilAnswer(app.port, head(c, "chunked"), true, cap);
        assert.ok(answer, `${c.method} ${c.path}: no answer after ${sent} bytes`);
        await mail(c, answer);
        // A GET body is never read: the page is served without waiting for it.
        const expected = c.method === "GET" ? c.ok[0] : 413;
        assert.equal(answer.status, expected, `${c.method} ${c.path}: ${answer.body}`);
        assert.ok(sent < cap, `${c.path}: the whole ${sent} bytes were taken`);
      }
    });
  },
});

Deno.test({
  name: "body limits: a body of exactly the limit is served; uploads need the operator token first",
  ...opts,
  async fn() {
    await withApp(async (app, mail) => {
      for (const c of CASES) {
        const res = await rawRequest(
          app.port,
          head(c, c.limit),
          new Uint8Array(c.limit).fill(0x61),
        );
        await mail(c, res);
        assert.ok(c.ok.includes(res.status), `${c.method} ${c.path}: ${res.status} ${res.body}`);
      }
      // Without the operator token an upload route reads nothing: 401 before the body is sent.
      const anonymous = CASES.at(-1)!;
      const res = await rawRequest(app.port, head({ ...anonymous, headers: form }, 20 * MiB));
      await mail(anonymous, res);
      assert.equal(res.status, 401);
      assert.equal(JSON.parse(res.body).code, 429);
    });
  },
});

Deno.test({
  name: "body limits: 50 MiB anonymous sign-in posts leave the server's memory flat",
  ...opts,
  async fn() {
    await withApp(async (app) => {
      // warm up: first page render (bundle), first database writes
      await rawRequest(app.port, [
        "GET /owner/login HTTP/1.1",
        "Host: 127.0.0.1",
        "Connection: close",
      ]);
      const before = await app.memory();
      for (
        const path of ["/owner/api/auth/login", "/users/api/auth/login", "/users/api/auth/signup"]
      ) {
        for (const chunked of [false, true]) {
          const c = { method: "POST", path, limit: 16 * KiB, headers: form, ok: [] };
          const lines = head(c, chunked ? "chunked" : 50 * MiB);
          const { answer } = await streamUntilAnswer(app.port, lines, chunked, 50 * MiB);
          assert.equal(answer?.status, 413, path);
        }
      }
      const after = await app.memory();
      const grew = (after.peak - before.peak) / 1024;
      console.log(
        `memory: rss ${before.rss} → ${after.rss} KiB, peak ${before.peak} → ${after.peak} KiB ` +
          `(+${grew.toFixed(1)} MiB for six 50 MiB posts)`,
      );
      assert.ok(grew < 32, `the peak grew by ${grew.toFixed(1)} MiB`);
    });
  },
});
