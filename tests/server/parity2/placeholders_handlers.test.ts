/**
 * Caddy parity, round 2, placeholders and handlers: Caddyfiles loaded through the admin API
 * (`POST /load`, `text/caddyfile`) of a real `gatehouse run` process and, where Caddy 2.6.2
 * already behaves this way, of a real Caddy beside it, then the same requests sent to both.
 * Where current Caddy changed after 2.6.2, the test names the commit and release and the
 * integration test of `caddyserver/caddy` it follows.
 */
import assert from "node:assert/strict";
import { call, freePort } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import { caddyInstalled, startCaddy } from "../parity/oracle.ts";

/** A server process whose config is replaced by Caddyfiles. */
interface Target {
  /** `caddy` or `gatehouse`, for messages. */
  name: string;
  /** Loads a Caddyfile whose sites are written for `ports` (see {@linkcode caddyfile}). */
  load(sites: (ports: number[]) => string, count?: number): Promise<number[]>;
  stop(): Promise<void>;
}

/** The global options every Caddyfile here starts with: the admin address stays put. */
function caddyfile(admin: string, ports: number[], sites: string): string {
  const global = ["{", `\tadmin ${admin}`, `\thttp_port ${ports[0]}`, "\tlog {"];
  return [...global, "\t\toutput discard", "\t}", "}", "", sites].join("\n");
}

function loadInto(name: string, adminURL: string, admin: string): Target["load"] {
  return async (sites: (ports: number[]) => string, count = 1) => {
    const ports = Array.from({ length: count }, () => freePort());
    const r = await call(adminURL, "POST", "/load", caddyfile(admin, ports, sites(ports)), {
      "content-type": "text/caddyfile",
    });
    assert.equal(r.status, 200, `${name}: ${r.body}`);
    return ports;
  };
}

async function gatehouse(): Promise<Target> {
  const s = await serve({});
  const admin = `127.0.0.1:${s.port}`;
  await up(s.base);
  return {
    name: "gatehouse",
    load: loadInto("gatehouse", s.base, admin),
    async stop() {
      await call(s.base, "POST", "/stop").catch(() => {});
      await finish(s.p, s.dir);
    },
  };
}

async function caddy(): Promise<Target> {
  const o = await startCaddy({ servers: {} });
  return {
    name: "caddy",
    load: loadInto("caddy", o.admin, o.admin.slice("http://".length)),
    stop: o.stop,
  };
}

/** Gatehouse, and Caddy 2.6.2 beside it when it is installed. */
async function targets(): Promise<Target[]> {
  return caddyInstalled() ? [await gatehouse(), await caddy()] : [await gatehouse()];
}

async function get(
  port: number,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, init);
  return { status: r.status, headers: r.headers, body: await r.text() };
}

const site = (port: number, body: string) => `:${port} {\n\tbind 127.0.0.1\n${body}\n}\n`;

Deno.test("issue 27 item 11: {http.request.local.port}, {http.request.body} and {http.request.remote.host/<bits>}", async (t) => {
  const all = await targets();
  const [gh] = all;
  try {
    await t.step("{http.request.local.port} is the port the connection arrived on", async () => {
      // current Caddy (ddb1d2c2b, #6182, v2.8.0; caddytest/integration/caddyfile_test.go
      // TestHttpRequestLocalPortPlaceholder); 2.6.2 has no such placeholder
      const [port] = await gh.load((p) => site(p[0], `\trespond "{http.request.local.port}"`));
      assert.equal((await get(port, "/")).body, String(port));
    });

    await t.step(
      "respond {http.request.body} echoes the body; a JSON body is application/json",
      async () => {
        const json = `{\n\t\t"greeting": "Hello, world!"\n\t}`;
        for (const target of all) {
          const [port] = await target.load((p) => site(p[0], "\trespond {http.request.body}"));
          const r = await get(port, "/", { method: "POST", body: json });
          assert.equal(r.status, 200, target.name);
          assert.equal(r.body, json, target.name);
          // Caddy sniffs the body as sent since c6673ad4d (#6249, v2.8.0;
          // caddytest/integration/handler_test.go TestRespondWithJSON); 2.6.2 looked at the
          // configured text `{http.request.body}`, which is no JSON
          assert.equal(
            r.headers.get("content-type"),
            target.name === "caddy" ? "text/plain; charset=utf-8" : "application/json",
            target.name,
          );
          const text = await get(port, "/", { method: "POST", body: "plain words" });
          assert.equal(text.body, "plain words", target.name);
          assert.equal(text.headers.get("content-type"), "text/plain; charset=utf-8", target.name);
          const none = await get(port, "/");
          assert.equal(none.status, 200, target.name);
          assert.equal(none.body, "", target.name);
        }
      },
    );

    await t.step(
      "the body read for a placeholder still reaches the handlers after it",
      async () => {
        for (const target of all) {
          const [front] = await target.load(
            (p) =>
              site(
                p[0],
                [
                  "\theader X-Seen {http.request.body}",
                  "\treverse_proxy 127.0.0.1:" + p[1],
                ].join("\n"),
              ) + site(p[1], '\trespond "upstream got: {http.request.body}"'),
            2,
          );
          const r = await get(front, "/", { method: "POST", body: "payload" });
          assert.equal(r.body, "upstream got: payload", target.name);
          assert.equal(r.headers.get("x-seen"), "payload", target.name);
        }
      },
    );

    await t.step("a body an upstream already took reads as empty, as in Caddy", async () => {
      for (const target of all) {
        const [front] = await target.load(
          (p) =>
            site(
              p[0],
              [
                `\treverse_proxy 127.0.0.1:${p[1]} {`,
                "\t\thandle_response {",
                '\t\t\trespond "after: [{http.request.body}]"',
                "\t\t}",
                "\t}",
              ].join("\n"),
            ) + site(p[1], '\trespond "up: {http.request.body}"'),
          2,
        );
        const r = await get(front, "/", { method: "POST", body: "sent once" });
        assert.equal(r.body, "after: []", target.name);
      }
    });

    await t.step("a matcher reading the body, and {http.request.body_base64}", async () => {
      const [port] = await gh.load((p) =>
        site(
          p[0],
          [
            "\t@magic expression {http.request.body}.contains('magic')",
            '\trespond @magic "magic: {http.request.body_base64}"',
            '\trespond "plain"',
          ].join("\n"),
        )
      );
      assert.equal(
        (await get(port, "/", { method: "POST", body: "a magic word" })).body,
        `magic: ${btoa("a magic word")}`,
      );
      assert.equal((await get(port, "/", { method: "POST", body: "nothing" })).body, "plain");
    });

    await t.step(
      "a body over the placeholder's 1 MiB answers 413, declared or streamed",
      async () => {
        const [port] = await gh.load((p) => site(p[0], "\trespond {http.request.body}"));
        const big = new Uint8Array((1 << 20) + 1).fill(97);
        const declared = await get(port, "/", { method: "POST", body: big });
        assert.equal(declared.status, 413);
        const streamed = await get(port, "/", {
          method: "POST",
          body: new Blob([big]).stream(),
        });
        assert.equal(streamed.status, 413);
        const exact = await get(port, "/", { method: "POST", body: big.subarray(1) });
        assert.equal(exact.status, 200);
        assert.equal(exact.body.length, 1 << 20);
        // a request_body limit met first answers with its own 413
        const [limited] = await gh.load((p) =>
          site(p[0], "\trequest_body {\n\t\tmax_size 10\n\t}\n\trespond {http.request.body}")
        );
        const over = await get(limited, "/", {
          method: "POST",
          body: new Blob(["x".repeat(11)]).stream(),
        });
        assert.equal(over.status, 413);
        const under = await get(limited, "/", { method: "POST", body: "x".repeat(10) });
        assert.equal(under.body, "x".repeat(10));
      },
    );

    await t.step(
      "{http.request.remote.host/<v4>[,<v6>]} keeps the top bits of the peer's address",
      async () => {
        // Caddy 2.6.2 has it (modules/caddyhttp/replacer.go, 9873ff991): the same answers
        const body =
          '\trespond "{http.request.remote.host/24} {http.request.remote.host/16,64} [{http.request.remote.host/x}] [{http.request.remote.host/33}] {http.request.remote.host/0}"';
        for (const target of all) {
          const [port] = await target.load((p) => site(p[0], body));
          assert.equal(
            (await get(port, "/")).body,
            "127.0.0.0/24 127.0.0.0/16 [] [] 0.0.0.0/0",
            target.name,
          );
          // an IPv6 peer: the count after the comma, the address written as Go writes it
          const [v6] = await target.load((p) =>
            `:${
              p[0]
            } {\n\tbind ::1\n\trespond "{http.request.remote.host/16,64} {http.request.remote.host/24} {http.request.remote.host/128}"\n}\n`
          );
          const r = await fetch(`http://[::1]:${v6}/`);
          assert.equal(await r.text(), "::/64 ::/24 ::1/128", target.name);
        }
      },
    );
  } finally {
    for (const target of all) await target.stop();
  }
});

Deno.test("issue 27 item 11: uri query expands placeholders in keys and values; uri replace unescapes braces", async (t) => {
  const all = await targets();
  const [gh] = all;
  const query = async (target: Target, directives: string[], uri: string) => {
    const [port] = await target.load((p) =>
      site(p[0], [...directives.map((d) => `\t${d}`), '\trespond "{query}"'].join("\n"))
    );
    return (await get(port, uri)).body;
  };
  try {
    await t.step("Caddy's uri query scenarios", async () => {
      // `uri query` came after 2.6.2 (69290d232, #6120 and 29f57faa8, #6165, v2.8.0): these are
      // the scenarios of current Caddy's caddytest/integration/caddyfile_test.go, by name
      const cases: [string, string[], string, string][] = [
        [
          "TestUriOps",
          [
            "uri query +foo bar",
            "uri query -baz",
            "uri query taz test",
            "uri query key=value example",
            "uri query changethis>changed",
          ],
          "/endpoint?foo=bar0&baz=buz&taz=nottest&changethis=val",
          "changed=val&foo=bar0&foo=bar&key%3Dvalue=example&taz=test",
        ],
        [
          "TestSetThenAddQueryParams",
          ["uri query foo bar", "uri query +foo baz"],
          "/endpoint",
          "foo=bar&foo=baz",
        ],
        [
          "TestSetThenDeleteParams",
          ["uri query bar foo{query.foo}", "uri query -foo"],
          "/endpoint?foo=bar",
          "bar=foobar",
        ],
        [
          "TestRenameAndOtherOps",
          ["uri query foo>bar", "uri query bar taz", "uri query +bar baz"],
          "/endpoint?foo=bar",
          "bar=taz&bar=baz",
        ],
        ["TestReplaceOps", ["uri query foo bar baz"], "/endpoint?foo=bar", "foo=baz"],
        [
          "TestReplaceWithReplacementPlaceholder",
          ["uri query foo bar {query.placeholder}"],
          "/endpoint?placeholder=baz&foo=bar",
          "foo=baz&placeholder=baz",
        ],
        [
          "TestReplaceWithKeyPlaceholder",
          ["uri query {query.placeholder} bar baz"],
          "/endpoint?placeholder=foo&foo=bar",
          "foo=baz&placeholder=foo",
        ],
        ["TestPartialReplacement", ["uri query foo ar az"], "/endpoint?foo=bar", "foo=baz"],
        ["TestNonExistingSearch", ["uri query foo var baz"], "/endpoint?foo=bar", "foo=bar"],
        [
          "TestReplaceAllOps",
          ["uri query * bar baz"],
          "/endpoint?foo=bar&baz=bar",
          "baz=baz&foo=baz",
        ],
        [
          "TestUriOpsBlock",
          ["uri query {\n\t\t+foo bar\n\t\t-baz\n\t\ttaz test\n\t}"],
          "/endpoint?foo=bar0&baz=buz&taz=nottest",
          "foo=bar0&foo=bar&taz=test",
        ],
      ];
      for (const [name, directives, uri, want] of cases) {
        assert.equal(await query(gh, directives, uri), want, name);
      }
    });

    await t.step("placeholders in rename, add, delete and regexp replacements", async () => {
      assert.equal(
        await query(gh, ["uri query {query.from}>{query.to}"], "/?from=a&to=b&a=1&b=0"),
        "b=1&from=a&to=b",
        "a rename onto a key takes its values over, as Go's map assignment",
      );
      assert.equal(
        await query(gh, ["uri query +{query.k} {query.v}-{http.request.method}"], "/?k=x&v=y"),
        "k=x&v=y&x=y-GET",
      );
      assert.equal(await query(gh, ["uri query -{query.drop}"], "/?drop=a&a=1"), "drop=a");
      assert.equal(
        await query(gh, ["uri query foo (b)(a)r ${2}${1}{query.tail}"], "/?foo=bar&tail=$$"),
        "foo=ab%24&tail=%24%24",
        "capture groups, then the placeholder's value as Go expands it ($$ is one $)",
      );
      assert.equal(
        await query(gh, ["uri query foo b {unknown.placeholder}"], "/?foo=bar"),
        "foo=%7Bunknown.placeholder%7Dar",
        "an unknown placeholder in a replacement stays as written (Caddy's ReplaceKnown)",
      );
      assert.equal(
        await query(gh, ["uri query +{query.none} x"], "/?a=1"),
        "a=1",
        "a key that is empty once replaced is left alone",
      );
    });

    await t.step("the query is encoded as Go's url.Values: sorted keys, QueryEscape", async () => {
      assert.equal(
        await query(gh, [`uri query +s "a*b~c!(d)' e"`], "/?z=1&a=%7E&bad=%zz&semi;x=1"),
        "a=~&s=a%2Ab~c%21%28d%29%27+e&z=1",
        "pairs Go cannot parse (a bad escape, a semicolon) are dropped",
      );
    });

    await t.step(
      "a query a placeholder puts in the path: taken after an empty ?, never expanded",
      async () => {
        const directives = [
          "@a path /a",
          "rewrite @a /x{http.request.header.X-T}",
          "@b path /b",
          "rewrite @b /x{http.request.header.X-T}?",
          "@c path /c",
          "rewrite @c /x{http.request.header.X-T}?k=v",
        ];
        const headers = { "x-t": "?a={system.os}&b=2" };
        for (const target of all) {
          const [port] = await target.load((p) =>
            site(
              p[0],
              [...directives.map((d) => `\t${d}`), '\trespond "{path} [{query}]"'].join("\n"),
            )
          );
          const answer = async (path: string) =>
            (await get(port, `${path}?orig=1`, { headers })).body;
          assert.equal(await answer("/a"), "/x [orig=1]", `${target.name}: no ? in the uri`);
          assert.equal(await answer("/c"), "/x [k=v]", `${target.name}: the uri's own query wins`);
          // Caddy 2.6.2 expanded placeholders the client sent there (here {system.os}); current
          // Caddy escapes them (176b043b0, GHSA-j8px-rmrx-76h9, v2.11.4)
          assert.equal(
            await answer("/b"),
            target.name === "caddy" ? `/x [a=${Deno.build.os}&b=2]` : "/x [a=%7Bsystem.os%7D&b=2]",
            target.name,
          );
        }
      },
    );

    await t.step('uri replace "\\}" %7D: the braces unescape, in the query too', async () => {
      const directives = ['uri replace "\\}" %7D', 'uri replace "\\{" %7B'];
      for (const target of all) {
        const body = await query(target, directives, "/endpoint?test={%20content%20}");
        // current Caddy's TestUriReplace (caddytest/integration/caddyfile_test.go); Caddy
        // 2.6.2 left a `\}` with no `{` in the text unreplaced (fixed by 80acf1bf2, #5995,
        // v2.8.0), so its `}` stays there
        assert.equal(
          body,
          target.name === "caddy" ? "test=%7B%20content%20}" : "test=%7B%20content%20%7D",
          target.name,
        );
      }
      for (const target of all) {
        const [port] = await target.load((p) =>
          site(
            p[0],
            '\turi replace a A 1\n\turi replace $x $$y\n\trespond "{path}?{query}"',
          )
        );
        assert.equal(
          (await get(port, "/aa/$x?a=a&q=$x")).body,
          "/Aa/$$y?A=a&q=$$y",
          `${target.name}: the limit counts in the path and the query apart; no $ patterns`,
        );
      }
    });
  } finally {
    for (const target of all) await target.stop();
  }
});

Deno.test("issue 27 item 12: map rows with fewer outputs; {resp.header.*} in intercept routes", async (t) => {
  const all = await targets();
  const [gh] = all;
  try {
    await t.step(
      "a row's missing outputs fall through to later rows, then to the defaults",
      async () => {
        // Caddy 2.6.2's map.go (unchanged since): per destination, the first matching row with
        // an output for it, else its default; a regexp row's outputs take groups only
        const map = [
          "\tmap {path} {a} {b} {c} {",
          "\t\t~^/x/(.*)$ first-$1",
          "\t\t/y - yb",
          '\t\t~^/r/(.*)$ "r-{http.request.method}-$1-$$-${1}x-$1x"',
          '\t\t/e "e-{http.request.method}"',
          '\t\t~^/n/(.*)$ - "second-$1"',
          '\t\t~^/n/(a.*)$ "later-$1" - "c-$1"',
          "\t\tdefault da db",
          "\t}",
          '\trespond "a={a} b={b} c={c}"',
        ].join("\n");
        const want: [string, string][] = [
          ["/x/abc", "a=first-abc b=db c="],
          ["/y", "a=da b=yb c="],
          ["/r/zz", "a=r-{http.request.method}-zz-$-zzx- b=db c="],
          ["/e", "a=e-GET b=db c="],
          ["/n/abc", "a=later-abc b=second-abc c=c-abc"],
          ["/n/xyz", "a=da b=second-xyz c="],
          ["/none", "a=da b=db c="],
        ];
        for (const target of all) {
          const [port] = await target.load((p) => site(p[0], map));
          for (const [path, body] of want) {
            assert.equal((await get(port, path)).body, body, `${target.name} ${path}`);
          }
        }
      },
    );

    await t.step(
      "intercept routes read the intercepted response's fields as {resp.header.*}",
      async () => {
        // intercept came after 2.6.2 (v2.8.0): current Caddy's
        // caddytest/integration/intercept_test.go TestIntercept, whose field comes from a
        // `header` directive before the answer, as Caddy's response writer shares its fields
        const [port] = await gh.load((p) =>
          site(
            p[0],
            [
              '\trespond /intercept "I\'m a teapot" 408',
              "\theader /intercept To-Intercept ok",
              '\trespond /no-intercept "I\'m not a teapot"',
              "\tintercept {",
              "\t\t@teapot status 408",
              "\t\thandle_response @teapot {",
              "\t\t\theader /intercept intercepted {resp.header.To-Intercept}",
              '\t\t\trespond /intercept "I\'m a combined coffee/tea pot that is temporarily out of coffee" 503',
              "\t\t}",
              "\t}",
            ].join("\n"),
          )
        );
        const r = await get(port, "/intercept");
        assert.equal(r.status, 503);
        assert.equal(r.body, "I'm a combined coffee/tea pot that is temporarily out of coffee");
        assert.equal(r.headers.get("intercepted"), "ok");
        const other = await get(port, "/no-intercept");
        assert.equal(other.status, 200);
        assert.equal(other.body, "I'm not a teapot");
      },
    );

    await t.step("an intercept matcher sees the fields a header directive set", async () => {
      const [port] = await gh.load((p) =>
        site(
          p[0],
          [
            "\theader X-Cache-Hint stale",
            '\trespond "original"',
            "\tintercept {",
            "\t\t@hinted header X-Cache-Hint stale",
            "\t\thandle_response @hinted {",
            '\t\t\trespond "hint was {resp.header.X-Cache-Hint}, status {resp.status_code}"',
            "\t\t}",
            "\t}",
          ].join("\n"),
        )
      );
      const r = await get(port, "/");
      assert.equal(r.body, "hint was stale, status 200");
      assert.equal(r.headers.get("x-cache-hint"), "stale");
    });

    await t.step(
      "reverse_proxy's handle_response reads the upstream's fields as {rp.header.*}",
      async () => {
        // Caddy 2.6.2 and current Caddy alike: {resp.*} is the intercept handler's (current
        // Caddy's shorthands.go maps it to {http.intercept.*}, which only intercept sets), so in
        // reverse_proxy's handle_response the upstream's fields are {rp.header.*}
        for (const target of all) {
          const [front] = await target.load(
            (p) =>
              site(
                p[0],
                [
                  `\treverse_proxy 127.0.0.1:${p[1]} {`,
                  "\t\t@up header X-Up *",
                  "\t\thandle_response @up {",
                  '\t\t\trespond "rp={rp.header.X-Up} status={rp.status_code}"',
                  "\t\t}",
                  "\t}",
                ].join("\n"),
              ) + site(p[1], '\theader X-Up "from upstream"\n\trespond "up" 202'),
            2,
          );
          const r = await get(front, "/");
          assert.equal(r.body, "rp=from upstream status=202", target.name);
        }
      },
    );
  } finally {
    for (const target of all) await target.stop();
  }
});
