// The npm mirror's tracing provider (the server's `tracing` handler's OpenTelemetry stack) in
// Node 20: a span from its tracer reaches an OTLP/HTTP receiver on loopback, in protobuf, when
// the provider is released. Proves the OpenTelemetry packages the mirror installs load and
// export on this Node. Build first: deno task build:npm. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { serve } from "./_serve.mjs";
import { acquireTracing, releaseTracing } from "../../npm/lib/server/tracing/provider.js";

test("npm tracing: a span goes out over OTLP/HTTP protobuf from Node", async () => {
  const received = [];
  const receiver = await serve(async (req) => {
    received.push({
      path: new URL(req.url).pathname,
      type: req.headers.get("content-type") ?? "",
      body: Buffer.from(await req.arrayBuffer()),
    });
    return new Response(new Uint8Array(), {
      headers: { "content-type": "application/x-protobuf" },
    });
  });
  // In Node the exporter reads its endpoint from process.env itself.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  try {
    const { tracer } = await acquireTracing();
    const span = tracer.startSpan("npm-node-span", { attributes: { "app.case": "node20" } });
    const traceId = span.spanContext().traceId;
    span.end();
    assert.equal(received.length, 0, "nothing is sent before the batch is flushed");
    await releaseTracing();
    assert.equal(received.length, 1, "the release flushes the batch once");
    const [{ path, type, body }] = received;
    assert.equal(path, "/v1/traces");
    assert.match(type, /protobuf/);
    assert.ok(body.includes(Buffer.from("npm-node-span")), "the span's name is in the export");
    assert.ok(body.includes(Buffer.from(traceId, "hex")), "the span's trace id is in the export");
    assert.ok(body.includes(Buffer.from("node20")), "the span's attribute is in the export");
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await receiver.close();
  }
});
