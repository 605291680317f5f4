/**
 * `tracing`: spans of real requests through two traced servers (a front one proxying to a
 * back one) exported over OTLP/HTTP to a local receiver, in protobuf and in JSON, with the
 * right trace, parent/child links, names, attributes and status; trace ids in variables and
 * the access log.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { type ReceivedSpan, startReceiver } from "./otlp_receiver.ts";

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

async function run(protocol: "http/protobuf" | "http/json") {
  const receiver = startReceiver();
  // The traces-only variables: the metrics tests, in the same process under --parallel, set
  // the metrics ones, and neither may send the other's data to its receiver.
  const envs = {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_SERVICE_NAME: "gatehouse-test",
  };
  for (const [k, v] of Object.entries(envs)) Deno.env.set(k, v);
  const srv = await startHttp({
    servers: {
      back: {
        listen: ["127.0.0.1:0"],
        logs: {},
        routes: [{
          handle: [
            { handler: "tracing", span: "back" },
            {
              handler: "static_response",
              body: "trace={http.vars.trace_id} parent={http.request.header.traceparent}",
            },
          ],
        }],
      },
      front: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/boom"] }],
            handle: [
              { handler: "tracing", span: "boom" },
              { handler: "error", status_code: 502, error: "bad upstream" },
            ],
            terminal: true,
          },
          {
            handle: [
              {
                handler: "tracing",
                span: "front {http.request.method}",
                span_attributes: { "app.route": "{http.request.uri.path}", "app.fixed": "yes" },
              },
              { handler: "reverse_proxy", upstreams: [{ dial: "BACK" }] },
            ],
          },
        ],
      },
    },
  });
  // the back server's port is known once it runs: point the proxy at it
  const backDial = new URL(srv.url("back")).host;
  await srv.reload({
    servers: {
      back: await (await srv.admin("/config/apps/http/servers/back")).json(),
      front: JSON.parse(
        JSON.stringify(await (await srv.admin("/config/apps/http/servers/front")).json())
          .replace("BACK", backDial),
      ),
    },
  });
  try {
    const r = await raw(srv.url("front"), "GET", "/page?q=1", {
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      "user-agent": "trace-test/1",
    });
    assert.equal(r.status, 200);
    const [, traceInBody, parentHeader] = /trace=(\w+) parent=(\S+)/.exec(r.text)!;
    assert.equal(traceInBody, CLIENT_TRACE, "the back server continues the client's trace");
    assert.equal((await raw(srv.url("front"), "GET", "/boom")).status, 502);

    const spans = await receiver.waitFor((s) =>
      s.some((x) => x.name === "back") && s.some((x) => x.name === "front GET") &&
      s.some((x) => x.name === "boom")
    );
    const by = (name: string) => spans.find((s) => s.name === name)!;
    const front: ReceivedSpan = by("front GET");
    const back = by("back");
    assert.equal(front.traceId, CLIENT_TRACE);
    assert.equal(front.parentSpanId, CLIENT_SPAN, "front is a child of the client's span");
    assert.equal(back.traceId, CLIENT_TRACE);
    assert.equal(back.parentSpanId, front.spanId, "back is a child of front");
    assert.equal(parentHeader, `00-${CLIENT_TRACE}-${back.spanId}-01`);
    assert.equal(front.kind, 2, "SERVER");
    assert.equal(front.service, "gatehouse-test");
    assert.equal(front.attributes["http.request.method"], "GET");
    assert.equal(front.attributes["url.path"], "/page");
    assert.equal(front.attributes["url.query"], "q=1");
    assert.equal(front.attributes["http.response.status_code"], 200);
    assert.equal(front.attributes["user_agent.original"], "trace-test/1");
    assert.equal(front.attributes["app.route"], "/page");
    assert.equal(front.attributes["app.fixed"], "yes");
    assert.equal(front.statusCode, 0, "unset on success");
    const boom = by("boom");
    assert.equal(boom.attributes["http.response.status_code"], 502);
    assert.equal(boom.statusCode, 2, "ERROR on a 5xx");
    assert.equal(boom.parentSpanId, "", "a request with no trace context starts a trace");
    assert.ok(
      receiver.contentTypes.every((t) =>
        t.includes(protocol === "http/json" ? "json" : "protobuf")
      ),
    );

    const log = await srv.waitLog((l) => l.msg === "handled request" && l.traceID === CLIENT_TRACE);
    assert.equal(log.spanID, back.spanId);
  } finally {
    await srv.stop();
    await receiver.stop();
    for (const k of Object.keys(envs)) Deno.env.delete(k);
  }
}

Deno.test("tracing: spans over OTLP/HTTP protobuf with parent/child links and attributes", () =>
  run("http/protobuf"));

Deno.test("tracing: spans over OTLP/HTTP JSON", () => run("http/json"));
