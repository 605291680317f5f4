/**
 * Log encoders that wrap others (`filter`, `append`, `journald`), the field filters, and the
 * `log_append` handler, read back from real log files written by a server on loopback; the
 * `filter` encoder's output compared field by field with Caddy 2.6.2's for the same request.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyInstalled, startCaddy } from "./oracle.ts";
import type { ProvisionContext } from "../../../lib/server/module/mod.ts";

type Rec = Record<string, unknown> & { request?: Record<string, unknown> };

async function readLines(file: string, want: number, timeoutMs = 5000): Promise<string[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const text = await Deno.readTextFile(file).catch(() => "");
    const lines = text.split("\n").filter(Boolean);
    if (lines.length >= want || Date.now() > end) return lines;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const FILTER_FIELDS = {
  "request>headers>Authorization": { filter: "replace", value: "REDACTED" },
  "request>headers>X-Secret": { filter: "delete" },
  "request>headers>X-Hashed": { filter: "hash" },
  "request>headers>Cookie": {
    filter: "cookie",
    actions: [
      { type: "replace", name: "session", value: "REDACTED" },
      { type: "delete", name: "tracking" },
      { type: "hash", name: "user" },
    ],
  },
  "request>headers>X-Token": { filter: "regexp", regexp: "tok-([a-z]+)-\\d+", value: "tok-${1}-N" },
  "request>uri": {
    filter: "query",
    actions: [
      { type: "replace", parameter: "foo", value: "REDACTED" },
      { type: "delete", parameter: "bar" },
      { type: "hash", parameter: "baz" },
    ],
  },
  "request>remote_ip": { filter: "ip_mask", ipv4_cidr: 16, ipv6_cidr: 32 },
  "request>headers>X-Forwarded-For": { filter: "ip_mask", ipv4_cidr: 24, ipv6_cidr: 64 },
  "request>method": { filter: "rename", name: "verb" },
};

function loggedServer(file: string, encoder: Record<string, unknown>) {
  return {
    http: {
      servers: {
        srv0: {
          listen: ["127.0.0.1:0"],
          logs: { should_log_credentials: true },
          routes: [{ handle: [{ handler: "static_response", body: "ok" }] }],
        },
      },
    },
    logging: {
      logs: {
        default: { exclude: ["http.log.access"], level: "ERROR" },
        access: {
          include: ["http.log.access"],
          writer: { output: "file", filename: file, roll: false },
          encoder,
        },
      },
    },
  };
}

const REQUEST: [string, string, Record<string, string>] = [
  "GET",
  "/path?foo=1&bar=2&baz=3&keep=a+b",
  {
    authorization: "Bearer s3cr3t",
    "x-secret": "gone",
    "x-hashed": "hash me",
    cookie: "session=abc; tracking=xyz; user=ann; other=1",
    "x-token": "tok-alpha-123 and tok-beta-456",
    "x-forwarded-for": "203.0.113.77, 2001:db8:abcd:12::1, [2001:db8::9]:443",
  },
];

/** The filtered parts of an access record. */
function filtered(rec: Rec): Record<string, unknown> {
  const req = rec.request!;
  const h = req.headers as Record<string, string[]>;
  return {
    authorization: h.Authorization,
    secret: h["X-Secret"],
    hashed: h["X-Hashed"],
    cookie: h.Cookie,
    token: h["X-Token"],
    xff: h["X-Forwarded-For"],
    uri: req.uri,
    remote_ip: req.remote_ip,
    verb: req.verb,
    method: req.method,
  };
}

Deno.test("log filter encoder: every filter on a real access record", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-logfilter-" });
  const file = `${dir}/access.log`;
  const cfg = loggedServer(file, {
    format: "filter",
    wrap: { format: "json" },
    fields: FILTER_FIELDS,
  });
  const srv = await startHttp(cfg.http, { logging: cfg.logging });
  try {
    const r = await raw(srv.url(), ...REQUEST);
    assert.equal(r.status, 200);
    const [line] = await readLines(file, 1);
    // hashes are the first 4 bytes of SHA-256, in hex
    const sha = async (s: string) =>
      Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)))
          .slice(0, 4),
        (b) => b.toString(16).padStart(2, "0"),
      ).join("");
    assert.deepEqual(filtered(JSON.parse(line) as Rec), {
      authorization: "REDACTED",
      secret: undefined,
      hashed: [await sha("hash me")],
      cookie: [`session=REDACTED; user=${await sha("ann")}; other=1`],
      token: ["tok-alpha-N and tok-beta-N"],
      xff: ["203.0.113.0, 2001:db8:abcd:12::, [2001:db8::]:443"],
      uri: `/path?baz=${await sha("3")}&foo=REDACTED&keep=a+b`,
      remote_ip: "127.0.0.0",
      verb: "GET",
      method: undefined,
    });
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "log filter encoder: the same filtered fields as Caddy 2.6.2",
  ignore: !caddyInstalled(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-logfilter-" });
    const enc = { format: "filter", wrap: { format: "json" }, fields: FILTER_FIELDS };
    const g = loggedServer(`${dir}/g.log`, enc);
    const c = loggedServer(`${dir}/c.log`, enc);
    const srv = await startHttp(g.http, { logging: g.logging });
    const caddy = await startCaddy(c.http, { logging: c.logging });
    try {
      await raw(srv.url(), ...REQUEST);
      await raw(caddy.url, ...REQUEST);
      const [gl] = await readLines(`${dir}/g.log`, 1);
      const [cl] = await readLines(`${dir}/c.log`, 1);
      // Caddy 2.6.2 hashed a query parameter's configured (empty) value instead of the
      // parameter, and hashed header lists in place (twice when logged); later Caddy fixed
      // both, and that is what is followed here (see the unit cases below).
      const { hashed: _g1, uri: gu, ...gRest } = filtered(JSON.parse(gl));
      const { hashed: _c1, uri: cu, ...cRest } = filtered(JSON.parse(cl));
      assert.deepEqual(gRest, cRest);
      const noHash = (u: unknown) => String(u).replace(/baz=[0-9a-f]{8}/, "baz=H");
      assert.equal(noHash(gu), noHash(cu));
    } finally {
      await caddy.stop();
      await srv.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("append and journald encoders: extra fields, priority prefixes, no time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-logappend-" });
  Deno.env.set("GATEHOUSE_TEST_REGION", "eu-west");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: {},
        routes: [
          {
            match: [{ path: ["/fail"] }],
            handle: [{ handler: "static_response", status_code: 503 }],
          },
          { handle: [{ handler: "static_response", body: "ok" }] },
        ],
      },
    },
  }, {
    logging: {
      logs: {
        default: { exclude: ["http.log.access"], level: "ERROR" },
        appended: {
          include: ["http.log.access"],
          writer: { output: "file", filename: `${dir}/append.log`, roll_disabled: true },
          encoder: {
            format: "append",
            wrap: { format: "json" },
            fields: {
              region: "{env.GATEHOUSE_TEST_REGION}",
              slash: "{system.slash}",
              team: "web",
              n: 3,
              // outside a request only the global placeholders have values
              vars: "{http.vars.x}",
              header: "{http.response.header.Server}",
              took: "{http.request.duration}",
            },
          },
        },
        journal: {
          include: ["http.log.access"],
          writer: { output: "file", filename: `${dir}/journal.log`, roll_disabled: true },
          encoder: { format: "journald", wrap: { format: "console" } },
        },
      },
    },
  });
  try {
    await raw(srv.url(), "GET", "/hello");
    await raw(srv.url(), "GET", "/fail");
    const appended = (await readLines(`${dir}/append.log`, 2)).map((l) => JSON.parse(l) as Rec);
    assert.equal(appended.length, 2);
    assert.equal(appended[0].region, "eu-west");
    assert.equal(appended[0].team, "web");
    assert.equal(appended[0].n, 3);
    assert.equal(appended[0].slash, "/");
    assert.deepEqual([appended[0].vars, appended[0].header, appended[0].took], [null, null, null]);
    assert.equal(appended[0].msg, "handled request");
    const journal = await readLines(`${dir}/journal.log`, 2);
    assert.match(journal[0], /^<6>INFO\thttp\.log\.access\thandled request\t\{/);
    assert.match(journal[1], /^<3>ERROR\thttp\.log\.access\thandled request\t\{/);
  } finally {
    Deno.env.delete("GATEHOUSE_TEST_REGION");
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("log field filters: the cases of Caddy's own filter tests", async () => {
  await import("../../../lib/server/standard.ts");
  const { FILTER_MODULES } = await import("../../../lib/server/logging/filters.ts");
  const make = (name: string, cfg: Record<string, unknown>) =>
    FILTER_MODULES[name].create(cfg, {} as ProvisionContext) as {
      filter(k: string, v: unknown): { key: string; value: unknown } | null;
    };
  const actions = [
    { type: "replace", parameter: "foo", value: "REDACTED" },
    { type: "delete", parameter: "bar" },
    { type: "hash", parameter: "hash" },
  ];
  const q = make("query", { actions });
  assert.deepEqual(q.filter("uri", "/path?foo=a&foo=b&bar=c&bar=d&baz=e&hash=hashed"), {
    key: "uri",
    value: "/path?baz=e&foo=REDACTED&foo=REDACTED&hash=1a06df82",
  });
  assert.deepEqual(
    q.filter("uri", [
      "/path1?foo=a&foo=b&bar=c&bar=d&baz=e&hash=alpha",
      "/path2?foo=c&foo=d&bar=e&bar=f&baz=g&hash=beta",
    ])!.value,
    [
      "/path1?baz=e&foo=REDACTED&foo=REDACTED&hash=8ed3f6ad",
      "/path2?baz=g&foo=REDACTED&foo=REDACTED&hash=f44e64e7",
    ],
  );
  const cookie = make("cookie", {
    actions: actions.map(({ parameter, ...a }) => ({ ...a, name: parameter })),
  });
  assert.deepEqual(
    cookie.filter("Cookie", ["foo=a; foo=b; bar=c; bar=d; baz=e; hash=hashed"])!.value,
    [
      "foo=REDACTED; foo=REDACTED; baz=e; hash=1a06df82",
    ],
  );
  const setCookie = make("set_cookie", { actions: [{ type: "hash", name: "hash" }] });
  assert.deepEqual(setCookie.filter("Set-Cookie", ["hash=hashed; Path=/; HttpOnly"])!.value, [
    "hash=1a06df82; Path=/; HttpOnly",
  ]);
  const mask = make("ip_mask", { ipv4_cidr: 16 });
  // a family with no mask configured masks to Go's nil IP, as Caddy prints it
  assert.deepEqual(mask.filter("ip", "192.168.9.9, ::1")!.value, "192.168.0.0, <nil>");
  assert.equal(make("delete", {}).filter("x", "y"), null);
  assert.throws(
    () => make("query", { actions: [{ type: "shuffle", parameter: "a" }] }),
    /invalid action type/,
  );
  assert.throws(() => make("multi_regexp", { operations: [] }), /1 to 50/);
});
