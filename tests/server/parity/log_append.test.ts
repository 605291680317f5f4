/**
 * `log_append`: fields added to the access log record of real requests (literal, variable,
 * placeholder, request and response bodies, early), read back from the server's log; and
 * include/exclude lists judged the way Caddy 2.6.2's `validate` judges them.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { caddyInstalled } from "./oracle.ts";

Deno.test("log_append: literal, variable, placeholder, bodies and early fields", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        logs: {},
        routes: [
          { handle: [{ handler: "vars", foo: "foo-value", n: 7 }] },
          {
            match: [{ path: ["/only-for-this-path"] }],
            handle: [{ handler: "log_append", key: "secret", value: "value" }],
          },
          {
            match: [{ path: ["/echo"] }],
            handle: [
              { handler: "log_append", key: "req", value: "{http.request.body}" },
              { handler: "log_append", key: "req64", value: "{http.request.body_base64}" },
              { handler: "log_append", key: "res", value: "{http.response.body}" },
              { handler: "static_response", body: "answer {http.request.uri.path}" },
            ],
          },
          {
            match: [{ path: ["/boom"] }],
            handle: [
              { handler: "log_append", key: "early", value: "{http.request.method}", early: true },
              { handler: "error", status_code: 502, error: "bad gateway" },
            ],
          },
          {
            handle: [
              { handler: "log_append", key: "const", value: "bar" },
              { handler: "log_append", key: "vars", value: "foo" },
              { handler: "log_append", key: "typed", value: "{http.vars.n}" },
              { handler: "log_append", key: "placeholder", value: "{http.request.uri.path}" },
              { handler: "static_response", body: "ok" },
            ],
          },
        ],
      },
    },
  });
  const access = (uri: string) =>
    srv.waitLog((l) => l.msg === "handled request" && (l.request as { uri: string }).uri === uri);
  try {
    assert.equal((await raw(srv.url(), "GET", "/a")).text, "ok");
    const a = await access("/a");
    assert.equal(a.const, "bar");
    assert.equal(a.vars, "foo-value");
    assert.equal(a.typed, 7);
    assert.equal(a.placeholder, "/a");
    assert.equal(a.secret, undefined);
    const keys = Object.keys(a);
    // each handler adds its field once the rest of the chain answered: innermost first
    assert.deepEqual(keys.slice(-4), ["placeholder", "typed", "vars", "const"], "appended last");

    await raw(srv.url(), "GET", "/only-for-this-path");
    assert.equal((await access("/only-for-this-path")).secret, "value");

    const e = await raw(srv.url(), "POST", "/echo", { "content-type": "text/plain" }, "hello body");
    assert.equal(e.text, "answer /echo", "the response still reaches the client");
    const echo = await access("/echo");
    assert.equal(echo.req, "hello body");
    assert.equal(echo.req64, btoa("hello body"));
    assert.equal(echo.res, "answer /echo");

    assert.equal((await raw(srv.url(), "GET", "/boom")).status, 502);
    const boom = await access("/boom");
    assert.equal(boom.status, 502);
    assert.equal(boom.early, "GET");
  } finally {
    await srv.stop();
  }
});

const FILTER_CASES: [string, string[], string[]][] = [
  ["disjoint namespaces with nesting", ["http.log.access"], ["http.log.access.admin"]],
  ["include nested under exclude", ["http.log.access.site"], ["http"]],
  ["same name in both", ["http.log.access"], ["http.log.access"]],
  ["include not nested in any exclude", ["tls"], ["http.log.access"]],
  ["prefix that is not a namespace", ["http.log"], ["http.lo"]],
  ["only include", ["admin"], []],
];

Deno.test({
  name: "log include/exclude: accepted and refused as Caddy 2.6.2 does",
  ignore: !caddyInstalled(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-logfilter-validate-" });
    try {
      for (const [what, include, exclude] of FILTER_CASES) {
        const config = { logging: { logs: { custom: { include, exclude } } } };
        await Deno.writeTextFile(`${dir}/c.json`, JSON.stringify(config));
        const caddy = await new Deno.Command("caddy", {
          args: ["validate", "--config", `${dir}/c.json`],
          stdout: "null",
          stderr: "piped",
          env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
        }).output();
        let ours = true;
        let why = "";
        try {
          await validateConfig(config);
        } catch (e) {
          ours = false;
          why = (e as Error).message;
        }
        assert.equal(
          ours,
          caddy.success,
          `${what}: gatehouse ${ours} (${why}), caddy ${caddy.success}`,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
