/**
 * The FastCGI client against a responder that says whatever fast-check makes it say, through
 * a real server on loopback: a well-formed response (records split and padded any way,
 * stderr interleaved, TCP writes cut anywhere) reaches the client exactly; a corrupted one
 * (bad version, request id, record type, END_REQUEST, status, head; missing END_REQUEST;
 * cut mid-record) or random bytes gives 502, or a body that fails rather than ends, and never
 * hangs; the server keeps answering afterwards. The other direction: whatever the client
 * sends in headers, query and path reaches real php-fpm unchanged.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { serve } from "../http/harness.ts";
import {
  concat,
  encodeRecord,
  END_REQUEST,
  STDERR,
  STDIN,
  STDOUT,
} from "../../../lib/server/http/handlers/reverse_proxy/fastcgi/records.ts";
import { phpFpmAvailable, startPhpFpm } from "./php_fpm.ts";
import { type EnvAnswer, SCRIPTS } from "./php_scripts.ts";

const WATCHDOG = 10_000;
const enc = new TextEncoder();

/** A responder on a free port that reads the whole request, then sends `next` and closes. */
function hostileResponder() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { next: [new Uint8Array(0)] as Uint8Array[], requests: 0 };
  const serveConn = async (conn: Deno.Conn) => {
    try {
      // read records until the empty STDIN record
      let buf: Uint8Array = new Uint8Array(0);
      const scratch = new Uint8Array(65536);
      let done = false;
      while (!done) {
        const n = await conn.read(scratch);
        if (n === null) return;
        buf = concat([buf, scratch.slice(0, n)]);
        let off = 0;
        while (buf.length - off >= 8) {
          const len = (buf[off + 4] << 8) | buf[off + 5];
          const total = 8 + len + buf[off + 6];
          if (buf.length - off < total) break;
          if (buf[off + 1] === STDIN && len === 0) done = true;
          off += total;
        }
        buf = buf.slice(off);
      }
      state.requests++;
      for (const piece of state.next) {
        if (piece.length) await conn.write(piece);
      }
    } catch {
      /* the proxy may close first */
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  (async () => {
    for await (const conn of listener) serveConn(conn);
  })().catch(() => {});
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    state,
    close: () => listener.close(),
  };
}

interface Model {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

const modelArb: fc.Arbitrary<Model> = fc.record({
  status: fc.constantFrom(200, 201, 404, 418, 500, 503),
  headers: fc.uniqueArray(
    fc.tuple(
      fc.stringMatching(/^x-[a-z0-9]{1,10}$/),
      fc.stringMatching(/^[!-~]([ !-~]{0,20}[!-~])?$/),
    ),
    { selector: (h) => h[0], maxLength: 6 },
  ),
  body: fc.oneof(
    fc.uint8Array({ maxLength: 2000 }),
    fc.uint8Array({ minLength: 70000, maxLength: 140000 }),
  ),
});

/** A record with chosen padding. */
function record(type: number, content: Uint8Array, padding: number): Uint8Array {
  const r = encodeRecord(type, content);
  const out = new Uint8Array(8 + content.length + padding);
  out.set(r.subarray(0, 8 + content.length));
  out[6] = padding;
  return out;
}

/** The records of a model's response: stdout cut at `cuts`, stderr between, END_REQUEST. */
function responseRecords(
  m: Model,
  cuts: number[],
  pads: number[],
  stderrAt: number[],
): Uint8Array[] {
  const head = `Status: ${m.status} X\r\n` + m.headers.map(([k, v]) => `${k}: ${v}\r\n`).join("") +
    "\r\n";
  const stdout = concat([enc.encode(head), m.body]);
  const at = [...new Set(cuts.map((c) => c % (stdout.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, stdout.length]) {
    for (let off = prev; off < c; off += 65535) {
      pieces.push(stdout.subarray(off, Math.min(c, off + 65535)));
    }
    prev = Math.max(prev, c);
  }
  const out: Uint8Array[] = [];
  pieces.forEach((p, i) => {
    if (stderrAt.includes(i)) {
      out.push(record(STDERR, enc.encode(`warning ${i}`), pads[i % pads.length] ?? 0));
    }
    out.push(record(STDOUT, p, pads[i % pads.length] ?? 0));
  });
  out.push(record(END_REQUEST, new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0]), 0));
  return out;
}

/** Cuts bytes into TCP writes. */
function writes(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  return out;
}

type Corruption =
  | { kind: "version" | "id" | "type" | "end_status" | "drop_end" | "cut"; at: number }
  | { kind: "status"; value: string }
  | { kind: "random"; bytes: Uint8Array };

const corruptionArb: fc.Arbitrary<Corruption> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("version", "id", "type", "end_status", "drop_end", "cut") as fc.Arbitrary<
      "version"
    >,
    at: fc.nat(),
  }),
  fc.record({
    kind: fc.constant("status") as fc.Arbitrary<"status">,
    value: fc.oneof(fc.constantFrom("99", "600", "abc", "2000", ""), fc.string({ maxLength: 5 })),
  }),
  fc.record({
    kind: fc.constant("random") as fc.Arbitrary<"random">,
    bytes: fc.uint8Array({ maxLength: 400 }),
  }),
);

/** A corrupted response, every corruption at or before END_REQUEST. */
function corrupt(recs: Uint8Array[], c: Corruption, m: Model): Uint8Array {
  if (c.kind === "random") return c.bytes;
  if (c.kind === "status") {
    const head = `Status: ${c.value}\r\n\r\n`;
    if (/^[2-5][0-9][0-9]$/.test(c.value.trim())) return enc.encode("\x01\x0b"); // not a status case
    return concat([
      record(STDOUT, concat([enc.encode(head), m.body.subarray(0, 10)]), 0),
      record(END_REQUEST, new Uint8Array(8), 0),
    ]);
  }
  const i = c.at % recs.length;
  const list = recs.map((r) => r.slice());
  const r = list[i];
  switch (c.kind) {
    case "version":
      r[0] = 2;
      break;
    case "id":
      r[3] = 7;
      break;
    case "type":
      r[1] = 11; // FCGI_GET_VALUES_RESULT: never part of a response
      break;
    case "end_status":
      list[list.length - 1][8 + 4] = 2; // overloaded
      break;
    case "drop_end":
      list.pop();
      break;
    case "cut": {
      const all = concat(list);
      const endStart = all.length - list[list.length - 1].length;
      return all.subarray(0, c.at % Math.max(1, endStart + 7));
    }
  }
  return concat(list);
}

async function ask(
  url: string,
): Promise<{ status: number; headers: Headers; body: Uint8Array | "failed" }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(WATCHDOG) });
  let body: Uint8Array | "failed";
  try {
    body = new Uint8Array(await r.arrayBuffer());
  } catch {
    body = "failed";
  }
  return { status: r.status, headers: r.headers, body };
}

Deno.test("fastcgi, hostile responder: exact answers for valid records, 502 or a failed body otherwise, never a hang", async () => {
  const up = hostileResponder();
  const srv = await serve([{
    handle: [{
      handler: "reverse_proxy",
      transport: { protocol: "fastcgi", root: "/srv", split_path: [".php"] },
      upstreams: [{ dial: up.dial }],
    }],
  }]);
  const url = `${srv.url()}/index.php`;
  try {
    await fc.assert(
      fc.asyncProperty(
        modelArb,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.nat({ max: 255 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat({ max: 6 }), { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.option(corruptionArb, { freq: 2 }),
        async (m, cuts, pads, stderrAt, tcpCuts, corruption) => {
          const recs = responseRecords(m, cuts, pads, stderrAt);
          if (corruption === null) {
            up.state.next = writes(concat(recs), tcpCuts);
            const got = await ask(url);
            assert.equal(got.status, m.status);
            for (const [k, v] of m.headers) assert.equal(got.headers.get(k), v);
            assert.notEqual(got.body, "failed");
            assert.deepEqual(got.body, m.body);
            return;
          }
          up.state.next = writes(corrupt(recs, corruption, m), tcpCuts);
          const got = await ask(url);
          assert.ok(
            got.status === 502 || got.body === "failed",
            `corruption ${JSON.stringify(corruption)}: status ${got.status}, body ${
              got.body === "failed" ? "failed" : got.body.length + " bytes"
            }`,
          );
        },
      ),
      { numRuns: 120 },
    );
    // still answering
    up.state.next = [concat([
      record(STDOUT, enc.encode("Content-Type: text/plain\r\n\r\nfine"), 0),
      record(END_REQUEST, new Uint8Array(8), 0),
    ])];
    const last = await ask(url);
    assert.equal(last.status, 200);
    assert.equal(new TextDecoder().decode(last.body as Uint8Array), "fine");
  } finally {
    await srv.stop();
    up.close();
  }
});

Deno.test({
  name: "fastcgi, client to php-fpm: any header values, query and path info arrive unchanged",
  ignore: !phpFpmAvailable(),
  async fn() {
    const fpm = await startPhpFpm(SCRIPTS);
    const srv = await serve([{
      handle: [{
        handler: "reverse_proxy",
        transport: { protocol: "fastcgi", root: fpm.root, split_path: [".php"] },
        upstreams: [{ dial: fpm.dial }],
      }],
    }]);
    const segment = fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 })
      .filter((s) => s !== "." && s !== ".." && !s.includes("\0"));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(
            fc.tuple(
              fc.stringMatching(/^x-[a-z0-9]{1,12}$/),
              fc.stringMatching(/^[!-~]([ !-~]{0,40}[!-~])?$/),
            ),
            { selector: (h) => h[0], maxLength: 5 },
          ),
          fc.array(segment, { maxLength: 4 }),
          fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.string({ maxLength: 12 }), {
            maxKeys: 4,
          }),
          async (headers, segments, query) => {
            const pathInfo = segments.map((s) => "/" + encodeURIComponent(s)).join("");
            const qs = new URLSearchParams(query).toString();
            const r = await fetch(`${srv.url()}/env.php${pathInfo}${qs ? "?" + qs : ""}`, {
              headers: Object.fromEntries(headers),
              signal: AbortSignal.timeout(WATCHDOG),
            });
            assert.equal(r.status, 200);
            const a = await r.json() as EnvAnswer;
            for (const [k, v] of headers) {
              assert.equal(a.server[`HTTP_${k.toUpperCase().replaceAll("-", "_")}`], v);
            }
            assert.equal(a.server.PATH_INFO, segments.map((s) => "/" + s).join(""));
            assert.equal(a.server.QUERY_STRING, qs);
            assert.deepEqual(a.get, Object.keys(query).length ? { ...query } : []);
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await srv.stop();
      await fpm.stop();
    }
  },
});
