// An HTTP/2 upstream on Node's own node:http2 (nghttp2), for the HTTP/2 transport tests: the
// one server here that sends `100 Continue` (Deno's node:http2 server cannot). Plain (h2c) by
// default; `--tls cert.pem key.pem` for h2 over TLS. Prints `port <n>` once listening, then
// one JSON line per event: sessions opened and closed, streams, `100 Continue` sent, request
// body bytes received, so a test sees what the proxy did on the wire.
//
//   node h2_upstream.mjs [--tls cert key] [--max-streams n]
import http2 from "node:http2";
import fs from "node:fs";

const args = process.argv.slice(2);
const tlsAt = args.indexOf("--tls");
const maxAt = args.indexOf("--max-streams");
const settings = maxAt >= 0 ? { maxConcurrentStreams: Number(args[maxAt + 1]) } : {};
const log = (ev) => process.stdout.write(JSON.stringify(ev) + "\n");

const server = tlsAt >= 0
  ? http2.createSecureServer({
    cert: fs.readFileSync(args[tlsAt + 1]),
    key: fs.readFileSync(args[tlsAt + 2]),
    settings,
  })
  : http2.createServer({ settings });

let sessions = 0;
server.on("session", (session) => {
  const id = ++sessions;
  session.gatehouseId = id;
  log({ ev: "session", id, peer: session.socket.remotePort });
  session.on("close", () => log({ ev: "session-close", id }));
  session.on("error", () => {});
});

let streams = 0;
server.on("stream", (stream, headers) => {
  const id = ++streams;
  const path = headers[":path"];
  const session = stream.session.gatehouseId;
  const order = ["headers"];
  let body = "";
  log({ ev: "stream", id, path, session, expect: headers["expect"] ?? null });
  stream.on("error", () => {});
  stream.on("data", (d) => {
    if (!order.includes("data")) order.push("data");
    body += d;
    log({ ev: "data", id, path, bytes: d.length });
  });
  stream.on("close", () => log({ ev: "stream-close", id, path, received: body.length }));
  const answer = (extra = {}) => {
    if (stream.headersSent || stream.destroyed) return;
    stream.respond({ ":status": 200, "x-order": order.join(","), ...extra });
    stream.end(`session=${session} stream=${id} body=${body}`);
  };
  if (path === "/continue") {
    // 100 Continue a little later: a body sent without waiting for it arrives first
    setTimeout(() => {
      if (stream.destroyed) return;
      order.push("100");
      log({ ev: "100", id, path });
      stream.additionalHeaders({ ":status": 100 });
    }, 300);
    stream.on("end", () => answer());
  } else if (path === "/reject") {
    // a final answer before any 100 Continue: the body is not wanted
    stream.respond({ ":status": 417 });
    stream.end("expectation failed");
  } else if (path.startsWith("/bighead")) {
    const n = Number(new URL(path, "http://x").searchParams.get("n"));
    stream.on("end", () => answer({ "x-big": "h".repeat(n) }));
  } else if (path === "/slow") {
    stream.on("end", () => setTimeout(answer, 300));
  } else {
    stream.on("end", () => answer());
  }
});

server.listen(0, "127.0.0.1", () => log({ ev: "port", port: server.address().port }));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
