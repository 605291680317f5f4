/**
 * The JavaScript side of one HTTP/3 request without QUIC: a request stream's bytes (one
 * HEADERS frame as a browser sends it, Huffman-coded) read and decoded into a web `Request`,
 * a `respond`-like answer encoded and written, on in-memory streams. What the listener costs
 * per request on top of Deno's QUIC.
 *
 *   deno bench -A bench/http/h3_pipeline_bench.ts
 *
 * @module
 */
import { QpackDecoder } from "../../lib/server/listeners/h3/qpack/decoder.ts";
import { encodeFieldSection } from "../../lib/server/listeners/h3/qpack/encoder.ts";
import { encodeFrame, FRAME } from "../../lib/server/listeners/h3/frames.ts";
import { readRequest, type RequestContext } from "../../lib/server/listeners/h3/request.ts";
import { sendResponse } from "../../lib/server/listeners/h3/response.ts";
import { StreamReader } from "../../lib/server/listeners/h3/stream_reader.ts";

const fields = [
  ":method",
  "GET",
  ":scheme",
  "https",
  ":authority",
  "localhost:8443",
  ":path",
  "/",
  "user-agent",
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  "accept",
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
  "accept-encoding",
  "gzip, deflate, br, zstd",
  "accept-language",
  "en-US,en;q=0.9",
]; // deno-fmt-ignore
const bytes = encodeFrame(FRAME.HEADERS, encodeFieldSection(fields, 0));
const decoder = new QpackDecoder({
  maxTableCapacity: 4096,
  maxBlockedStreams: 16,
  maxFieldSectionSize: 1 << 20,
});
const context: RequestContext = {
  decoder,
  streamId: 0,
  maxHeaderBytes: 1 << 20,
  fallbackHost: "127.0.0.1:8443",
  flush() {},
  fatal() {},
};
const prepared = new Response("Hello, World!", {
  headers: { "content-type": "text/plain; charset=utf-8", server: "Gatehouse" },
});
/** A stream writer that drops what it is given (the QUIC stream's place). */
const writer = {
  write: (_b: Uint8Array) => Promise.resolve(),
  close: () => Promise.resolve(),
} as unknown as WritableStreamDefaultWriter<Uint8Array>;

Deno.bench("h3: request stream to Request, respond answer written", async () => {
  const r = new StreamReader(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream());
  const head = await readRequest(r, context);
  if (head.kind !== "request") throw new Error(head.kind);
  head.body.reader.cancel();
  await sendResponse(writer, prepared.clone(), false);
});
