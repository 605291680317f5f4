/**
 * The parts of the worker processes that need no process: the Prometheus texts summed, the
 * upstream records merged, the CPU list and worker count parsed, the pipe's framing.
 */
import assert from "node:assert/strict";
import { mergeUpstreams, sumPrometheusText } from "../../../lib/server/workers/aggregate.ts";
import { cpuListSize, parseWorkers } from "../../../lib/server/workers/count.ts";
import { PipeEnd } from "../../../lib/server/workers/protocol.ts";

Deno.test("workers: Prometheus texts are summed by name and labels, each family one group", () => {
  const w1 = [
    "# HELP a_total A.",
    "# TYPE a_total counter",
    'a_total{x="1"} 2',
    'a_total{x="2"} 1',
    "# HELP h Histogram.",
    "# TYPE h histogram",
    'h_bucket{le="1"} 1',
    'h_bucket{le="+Inf"} 2',
    "h_sum 1.5",
    "h_count 2",
    "# HELP process_start_time_seconds Start.",
    "# TYPE process_start_time_seconds gauge",
    "process_start_time_seconds 200",
    "",
  ].join("\n");
  const w2 = [
    "# HELP a_total A.",
    "# TYPE a_total counter",
    'a_total{x="2"} 4',
    'a_total{x="3"} 1',
    "# HELP h Histogram.",
    "# TYPE h histogram",
    'h_bucket{le="1"} 0',
    'h_bucket{le="+Inf"} 3',
    "h_sum 0.25",
    "h_count 3",
    "# HELP process_start_time_seconds Start.",
    "# TYPE process_start_time_seconds gauge",
    "process_start_time_seconds 100",
    "# HELP only_two Only in the second.",
    "# TYPE only_two gauge",
    "only_two 7",
    "",
  ].join("\n");
  assert.equal(
    sumPrometheusText([w1, w2]),
    [
      "# HELP a_total A.",
      "# TYPE a_total counter",
      'a_total{x="1"} 2',
      'a_total{x="2"} 5',
      'a_total{x="3"} 1',
      "# HELP h Histogram.",
      "# TYPE h histogram",
      'h_bucket{le="1"} 1',
      'h_bucket{le="+Inf"} 5',
      "h_sum 1.75",
      "h_count 5",
      "# HELP process_start_time_seconds Start.",
      "# TYPE process_start_time_seconds gauge",
      "process_start_time_seconds 100",
      "# HELP only_two Only in the second.",
      "# TYPE only_two gauge",
      "only_two 7",
      "",
    ].join("\n"),
  );
  assert.equal(sumPrometheusText([]), "");
});

Deno.test("workers: upstream records are merged by address, requests and fails summed", () => {
  assert.deepEqual(
    mergeUpstreams([
      [{ address: "a:1", num_requests: 1, fails: 0 }, {
        address: "b:2",
        num_requests: 0,
        fails: 2,
      }],
      [{ address: "b:2", num_requests: 3, fails: 1 }],
      [],
    ]),
    [{ address: "a:1", num_requests: 1, fails: 0 }, { address: "b:2", num_requests: 3, fails: 3 }],
  );
});

Deno.test("workers: CPU lists and worker counts", () => {
  assert.equal(cpuListSize("0-3"), 4);
  assert.equal(cpuListSize("0,2,4-5\n"), 4);
  assert.equal(cpuListSize("x"), 0);
  assert.equal(parseWorkers("4", "--workers"), 4);
  assert.equal(parseWorkers(" auto ", "--workers"), "auto");
  for (const bad of ["0", "-1", "2.5", "257", "", "two"]) {
    assert.throws(
      () => parseWorkers(bad, "--workers"),
      /--workers: the number of worker processes must be 1 to 256 or auto/,
    );
  }
});

Deno.test("workers: the pipe carries messages whole, and tells stray output apart", async () => {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const got: unknown[] = [];
  const stray: string[] = [];
  const reading = new PipeEnd<unknown, never>(readable, new WritableStream()).read(
    (m) => got.push(m),
    (t) => stray.push(t),
  );
  const writer = writable.getWriter();
  const sent = new PipeEnd<never, unknown>(
    new ReadableStream(),
    new WritableStream({ write: (chunk) => writer.write(chunk) }),
  );
  sent.send({ t: "log", entry: { msg: "a\nb", fields: { error: new Error("boom") } } });
  sent.send({ t: "reply", id: 1, ok: true, value: { big: "x".repeat(100_000) } });
  await sent.flush();
  // output that is no message, a line of its own and the start of a line
  await writer.write(new TextEncoder().encode("stray line\nhalf"));
  sent.send({ t: "hello", pid: 1, version: 1 });
  await sent.flush();
  await writer.close();
  await reading;
  assert.deepEqual(got, [
    { t: "log", entry: { msg: "a\nb", fields: { error: "boom" } } },
    { t: "reply", id: 1, ok: true, value: { big: "x".repeat(100_000) } },
    { t: "hello", pid: 1, version: 1 },
  ]);
  assert.deepEqual(stray, ["stray line", "half"]);
});
