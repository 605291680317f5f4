/**
 * Properties of the new request paths: whatever target, cookies and forwarded addresses a
 * client sends, a server using the `file` matcher (try_files), `url_pattern`, `intercept`
 * and an access log through the `filter` encoder answers with a routed answer or a 4xx —
 * never a 5xx, never no answer — and writes a well-formed log record; the log field filters
 * never throw on any value.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { FILTER_MODULES } from "../../../lib/server/logging/filters.ts";
import type { ProvisionContext } from "../../../lib/server/module/mod.ts";

const segmentArb = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9._~-]{0,8}$/),
  fc.constantFrom(
    "..",
    ".",
    "%2e%2e",
    "%2F",
    "%00",
    "%zz",
    "*",
    "?",
    "[",
    "]",
    "\\",
    "%5B",
    "a*b",
    "{x}",
    "%7B",
    "index.html",
  ),
);
const targetArb = fc.tuple(
  fc.array(segmentArb, { maxLength: 5 }),
  fc.option(fc.string({ maxLength: 12 })),
)
  .map(([s, q]) => "/" + s.join("/") + (q === null ? "" : "?" + encodeURIComponent(q)));
const headerValueArb = fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n\0]/g, ""));

Deno.test("try_files, url_pattern, intercept and filtered logs: any request, no 5xx", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "gatehouse-prop-" }));
  await Deno.writeTextFile(`${root}/index.html`, "shell");
  await Deno.mkdir(`${root}/d`);
  await Deno.writeTextFile(`${root}/d/a*b.txt`, "star");
  const logDir = await Deno.makeTempDir({ prefix: "gatehouse-prop-log-" });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: { should_log_credentials: true },
        routes: [
          {
            match: [{ url_pattern: { pattern: "/u/:id" } }],
            handle: [{ handler: "static_response", body: "u {http.url_pattern.pathname.id}" }],
            terminal: true,
          },
          {
            handle: [
              {
                handler: "intercept",
                handle_response: [{ match: { status_code: [4] }, status_code: 410 }],
              },
              {
                handler: "subroute",
                routes: [
                  {
                    match: [{
                      file: {
                        root,
                        try_files: [
                          "{http.request.uri.path}",
                          "{http.request.uri.path}/",
                          "/index.html",
                        ],
                      },
                    }],
                    handle: [{ handler: "rewrite", uri: "{http.matchers.file.relative}" }],
                  },
                  { handle: [{ handler: "file_server", root }] },
                ],
              },
            ],
          },
        ],
      },
    },
  }, {
    logging: {
      logs: {
        default: { exclude: ["http.log.access"], level: "ERROR" },
        filtered: {
          include: ["http.log.access"],
          writer: { output: "file", filename: `${logDir}/access.log`, roll: false },
          encoder: {
            format: "filter",
            fields: {
              "request>uri": { filter: "query", actions: [{ type: "hash", parameter: "q" }] },
              "request>headers>Cookie": {
                filter: "cookie",
                actions: [{ type: "replace", name: "sid", value: "x" }],
              },
              "request>headers>X-Forwarded-For": { filter: "ip_mask", ipv4_cidr: 8, ipv6_cidr: 16 },
              "request>client_ip": { filter: "ip_mask", ipv4_cidr: 8, ipv6_cidr: 16 },
            },
          },
        },
      },
    },
  });
  let sent = 0;
  try {
    await fc.assert(
      fc.asyncProperty(targetArb, headerValueArb, headerValueArb, async (target, cookie, xff) => {
        const r = await raw(srv.url(), "GET", target, { cookie, "x-forwarded-for": xff });
        sent++;
        assert.ok(r.status >= 200 && r.status < 500, `${target}: ${r.status}`);
      }),
      { numRuns: 150, interruptAfterTimeLimit: 60_000 },
    );
    // every request got a record, and each record is JSON
    const end = Date.now() + 5000;
    let lines: string[] = [];
    while (Date.now() < end) {
      lines = (await Deno.readTextFile(`${logDir}/access.log`)).split("\n").filter(Boolean);
      if (lines.length >= sent) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(lines.length, sent);
    for (const l of lines) assert.equal(JSON.parse(l).msg, "handled request");
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
    await Deno.remove(logDir, { recursive: true });
  }
});

Deno.test("log field filters never throw, whatever the value", async () => {
  const ctx = {} as ProvisionContext;
  const filters = await Promise.all([
    FILTER_MODULES.query.create({
      actions: [{ type: "hash", parameter: "a" }, { type: "delete", parameter: "b" }],
    }, ctx),
    FILTER_MODULES.cookie.create({ actions: [{ type: "hash", name: "a" }] }, ctx),
    FILTER_MODULES.set_cookie.create(
      { actions: [{ type: "replace", name: "a", value: "v" }] },
      ctx,
    ),
    FILTER_MODULES.ip_mask.create({ ipv4_cidr: 24, ipv6_cidr: 64 }, ctx),
    FILTER_MODULES.regexp.create({ regexp: "(a+)+b", value: "${1}" }, ctx),
    FILTER_MODULES.hash.create({}, ctx),
  ]);
  const valueArb = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.array(fc.string({ maxLength: 30 }), { maxLength: 4 }),
    fc.constantFrom(
      "a=1; a=2",
      "[::1]:80, 1.2.3.4",
      "/p?a=%zz&b=1#f",
      "%",
      'a="q"; b',
      null,
      42,
      {},
    ),
  );
  fc.assert(
    fc.property(valueArb, (v) => {
      for (const f of filters) f.filter("field", v);
    }),
    { numRuns: 1000 },
  );
});
