// The servers of Caddy's integration tests that need Go's HTTP/2 server, on Node's own
// node:http2 (run with the real `node`). Prints `{"port":n}` once listening, then one JSON line
// per connection and per request. Stops when stdin closes.
//
//   node peers.mjs proxyproto            go-proxyproto (REQUIRE) + h2c.NewHandler: a PROXY v1 or
//                                        v2 header must open each connection; HTTP/1.1 and
//                                        HTTP/2 with prior knowledge after it; prints the source
//                                        address each header gave, answers "OK"
//   node peers.mjs proxyproto-tls c k    the same, then TLS (h2 and http/1.1 by ALPN), as
//                                        httptest.Server.StartTLS behind go-proxyproto
//   node peers.mjs h2c-echo port host    stream_test's h2c server: HTTP/2 only (else 500), Host
//                                        must be `host` (else 404), path /tov2ray*; answers 200
//                                        with Cache-Control: no-store at once, then echoes the
//                                        request body as it comes
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";
import fs from "node:fs";

const [mode, ...args] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const V2_SIG = Buffer.from("\r\n\r\n\0\r\nQUIT\n", "latin1");

/** Parses a PROXY header at the start of `buf`: { length, source } or null when incomplete. */
function parseProxy(buf) {
  if (buf.length >= 16 && buf.subarray(0, 12).equals(V2_SIG)) {
    const len = buf.readUInt16BE(14);
    if (buf.length < 16 + len) return null;
    const fam = buf[13] >> 4;
    const body = buf.subarray(16, 16 + len);
    let source = "";
    if (fam === 1) source = `${[...body.subarray(0, 4)].join(".")}:${body.readUInt16BE(8)}`;
    if (fam === 2) {
      const groups = [];
      for (let i = 0; i < 16; i += 2) groups.push(body.readUInt16BE(i).toString(16));
      source = `[${groups.join(":")}]:${body.readUInt16BE(32)}`;
    }
    return { length: 16 + len, source, version: 2 };
  }
  const text = buf.toString("latin1");
  if (!"PROXY ".startsWith(text.slice(0, 6))) throw new Error("no PROXY header");
  const end = text.indexOf("\r\n");
  if (end < 0) {
    if (buf.length > 107) throw new Error("PROXY v1 line too long");
    return null;
  }
  const [, , src, , sport] = text.slice(0, end).split(" ");
  const source = src?.includes(":") ? `[${src}]:${sport}` : `${src}:${sport}`;
  return { length: end + 2, source, version: 1 };
}

/**
 * The connection after its PROXY header, as a stream that gives `first` (the bytes read past
 * the header) before the rest: a TLS or HTTP server reading the socket's handle itself would
 * not see bytes put back with `unshift`.
 */
function replaying(sock, first) {
  const d = new Duplex({
    read() {
      sock.resume();
    },
    write(chunk, _enc, cb) {
      sock.write(chunk, cb);
    },
    final(cb) {
      sock.end();
      cb();
    },
    destroy(err, cb) {
      sock.destroy();
      cb(err);
    },
  });
  d.remoteAddress = sock.remoteAddress;
  d.remotePort = sock.remotePort;
  if (first.length) d.push(first);
  sock.on("data", (c) => {
    if (!d.push(c)) sock.pause();
  });
  sock.on("end", () => d.push(null));
  sock.on("close", () => d.destroy());
  return d;
}

if (mode === "proxyproto" || mode === "proxyproto-tls") {
  const tls = mode === "proxyproto-tls";
  const answer = (req, res) => {
    out({ request: req.url, method: req.method, httpVersion: req.httpVersion });
    res.writeHead(200);
    res.end("OK");
  };
  const h1 = http.createServer(answer);
  const h2 = http2.createServer(answer);
  const secure = tls
    ? http2.createSecureServer({
      cert: fs.readFileSync(args[0]),
      key: fs.readFileSync(args[1]),
      allowHTTP1: true,
    }, answer)
    : null;
  // h2c.NewHandler: the HTTP/2 preface means HTTP/2, anything else HTTP/1.1
  const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const server = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    let hdr = null;
    const onData = (d) => {
      buf = Buffer.concat([buf, d]);
      if (!hdr) {
        try {
          hdr = parseProxy(buf);
        } catch (e) {
          out({ error: e.message });
          return sock.destroy();
        }
        if (!hdr) return;
        out({ connection: hdr.source, version: hdr.version });
        buf = buf.subarray(hdr.length);
      }
      let target = secure;
      if (!tls) {
        const s = buf.toString("latin1");
        if (s.length < PREFACE.length && PREFACE.startsWith(s)) return; // not yet known
        target = s.startsWith(PREFACE) ? h2 : h1;
      }
      sock.off("data", onData);
      target.emit("connection", replaying(sock, buf));
    };
    sock.on("data", onData);
    sock.on("error", () => {});
  });
  server.listen(0, "127.0.0.1", () => out({ port: server.address().port }));
} else if (mode === "h2c-echo") {
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    out({ method: headers[":method"], path: headers[":path"], authority: headers[":authority"] });
    if (headers[":authority"] !== args[1]) {
      stream.respond({ ":status": 404 });
      return stream.end();
    }
    if (!headers[":path"].startsWith("/tov2ray")) {
      stream.respond({ ":status": 404 });
      return stream.end();
    }
    stream.respond({ ":status": 200, "cache-control": "no-store" });
    stream.pipe(stream);
    stream.on("error", () => {});
  });
  // a request that is not HTTP/2 gets 500 ("We only accept HTTP/2!")
  server.on("unknownProtocol", (sock) => {
    sock.end("HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n");
  });
  server.listen(Number(args[0]), "127.0.0.1", () => out({ port: server.address().port }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
