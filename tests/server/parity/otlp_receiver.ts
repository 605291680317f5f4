/**
 * A local OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` in JSON or protobuf
 * (decoded here with a small reader of the protobuf wire format) and keeps the spans.
 */

/** One received span, with ids in hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  statusCode: number;
  service: string;
}

type Field = { n: number; wire: number; v: bigint | Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++];
      r |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return r;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const n = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ n, wire, v: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ n, wire, v: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) {
      out.push({ n, wire, v: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 5) {
      out.push({ n, wire, v: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const sub = (f: Field[], n: number) => f.filter((x) => x.n === n).map((x) => x.v as Uint8Array);

function anyValue(b: Uint8Array): string | number | boolean {
  const f = fields(b)[0];
  if (!f) return "";
  if (f.n === 1) return text(f.v as Uint8Array);
  if (f.n === 2) return f.v === 1n;
  if (f.n === 3) return Number(BigInt.asIntN(64, f.v as bigint));
  if (f.n === 4) return new DataView((f.v as Uint8Array).slice().buffer).getFloat64(0, true);
  return "";
}

function keyValues(list: Uint8Array[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    out[text(sub(f, 1)[0] ?? new Uint8Array())] = anyValue(sub(f, 2)[0] ?? new Uint8Array());
  }
  return out;
}

/** Decodes an ExportTraceServiceRequest in protobuf. */
export function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of sub(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = keyValues(sub(fields(sub(rsf, 1)[0] ?? new Uint8Array()), 1));
    for (const ss of sub(rsf, 2)) {
      for (const sp of sub(fields(ss), 2)) {
        const f = fields(sp);
        const status = sub(f, 15)[0];
        const code = status ? fields(status).find((x) => x.n === 3)?.v : 0n;
        spans.push({
          traceId: hex(sub(f, 1)[0]),
          spanId: hex(sub(f, 2)[0]),
          parentSpanId: hex(sub(f, 4)[0] ?? new Uint8Array()),
          name: text(sub(f, 5)[0]),
          kind: Number(f.find((x) => x.n === 6)?.v ?? 0n),
          attributes: keyValues(sub(f, 9)),
          statusCode: Number(code ?? 0n),
          service: String(resource["service.name"] ?? ""),
        });
      }
    }
  }
  return spans;
}

/** One received sum or gauge point, or a histogram's count. */
export interface ReceivedPoint {
  metric: string;
  kind: "sum" | "gauge" | "histogram";
  attributes: Record<string, string | number | boolean>;
  value: number;
}

const f64 = (b: Uint8Array) => new DataView(b.slice().buffer).getFloat64(0, true);

/** Decodes an ExportMetricsServiceRequest in protobuf (sums, gauges, histogram counts). */
export function decodeMetricsProtobuf(body: Uint8Array): ReceivedPoint[] {
  const out: ReceivedPoint[] = [];
  for (const rm of sub(fields(body), 1)) {
    for (const sm of sub(fields(rm), 2)) {
      for (const m of sub(fields(sm), 2)) {
        const f = fields(m);
        const metric = text(sub(f, 1)[0]);
        for (const [n, kind] of [[5, "gauge"], [7, "sum"], [9, "histogram"]] as const) {
          for (const data of sub(f, n)) {
            for (const dp of sub(fields(data), 1)) {
              const d = fields(dp);
              const attributes = keyValues(sub(d, kind === "histogram" ? 9 : 7));
              let value = 0;
              const u64 = (b: Uint8Array) =>
                Number(new DataView(b.slice().buffer).getBigUint64(0, true));
              if (kind === "histogram") {
                const count = d.find((x) => x.n === 4);
                value = count ? u64(count.v as Uint8Array) : 0;
              } else {
                const dbl = d.find((x) => x.n === 4);
                const int = d.find((x) => x.n === 6);
                value = dbl ? f64(dbl.v as Uint8Array) : int
                  ? Number(
                    BigInt.asIntN(
                      64,
                      new DataView((int.v as Uint8Array).slice().buffer).getBigUint64(0, true),
                    ),
                  )
                  : 0;
              }
              out.push({ metric, kind, attributes, value });
            }
          }
        }
      }
    }
  }
  return out;
}

type JsonValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};

function jsonValue(v: JsonValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? "";
}

/** Decodes an ExportMetricsServiceRequest in OTLP JSON (sums, gauges, histogram counts). */
export function decodeMetricsJson(body: string): ReceivedPoint[] {
  const out: ReceivedPoint[] = [];
  for (const rm of JSON.parse(body).resourceMetrics ?? []) {
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        for (const kind of ["sum", "gauge", "histogram"] as const) {
          for (const dp of m[kind]?.dataPoints ?? []) {
            const attributes: Record<string, string | number | boolean> = {};
            for (const a of dp.attributes ?? []) attributes[a.key] = jsonValue(a.value);
            const value = kind === "histogram"
              ? Number(dp.count ?? 0)
              : Number(dp.asDouble ?? dp.asInt ?? 0);
            out.push({ metric: m.name, kind, attributes, value });
          }
        }
      }
    }
  }
  return out;
}

/** Decodes an ExportTraceServiceRequest in OTLP JSON. */
export function decodeJson(body: string): ReceivedSpan[] {
  const req = JSON.parse(body);
  const spans: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const res: Record<string, unknown> = {};
    for (const a of rs.resource?.attributes ?? []) res[a.key] = jsonValue(a.value);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, string | number | boolean> = {};
        for (const a of s.attributes ?? []) attributes[a.key] = jsonValue(a.value);
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind,
          attributes,
          statusCode: s.status?.code ?? 0,
          service: String(res["service.name"] ?? ""),
        });
      }
    }
  }
  return spans;
}

/** A running receiver. */
export interface Receiver {
  endpoint: string;
  spans: ReceivedSpan[];
  /** Metric points, in the order received. */
  points: ReceivedPoint[];
  contentTypes: string[];
  waitFor(pred: (s: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

export function startReceiver(): Receiver {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const contentTypes: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if ((path !== "/v1/traces" && path !== "/v1/metrics") || req.method !== "POST") {
      return new Response("not found", { status: 404 });
    }
    const type = req.headers.get("content-type") ?? "";
    contentTypes.push(type);
    const body = new Uint8Array(await req.arrayBuffer());
    if (path === "/v1/metrics") {
      points.push(
        ...(type.includes("json")
          ? decodeMetricsJson(new TextDecoder().decode(body))
          : decodeMetricsProtobuf(body)),
      );
      return new Response(type.includes("json") ? "{}" : new Uint8Array(0), {
        headers: {
          "content-type": type.includes("json") ? "application/json" : "application/x-protobuf",
        },
      });
    }
    spans.push(
      ...(type.includes("json")
        ? decodeJson(new TextDecoder().decode(body))
        : decodeProtobuf(body)),
    );
    return new Response(type.includes("json") ? "{}" : new Uint8Array(0), {
      headers: {
        "content-type": type.includes("json") ? "application/json" : "application/x-protobuf",
      },
    });
  });
  return {
    endpoint: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    spans,
    points,
    contentTypes,
    async waitFor(pred, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (!pred(spans)) {
        if (Date.now() > end) throw new Error(`spans not received: ${JSON.stringify(spans)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return spans;
    },
    stop: () => server.shutdown(),
  };
}
