// An interactive HTTP/2 client in Node (the real `node` on PATH) for the node engine's HTTP/2
// tests. Commands come as JSON lines on stdin, answers and session events go out as JSON lines:
//
//   {"op":"connect","origin":"https://localhost:1234","ca":"PEM","cert":"PEM","key":"PEM",
//    "servername":"a.test","push":false,"proxy":"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
//    "insecure":false}              (insecure: the server's certificate is not verified)
//   {"op":"request","id":1,"path":"/x","method":"POST","headers":{},"body":"abc","repeat":1000,
//    "slow":[100, 20],"afterResponse":false}
//                                   (slow: send the body in <count> pieces every <ms>;
//                                    afterResponse: send it once the response headers came)
//   {"op":"close"}                  (session.close, then exit once it closed)
//
//   {"id":1,"status":200,"headers":{...},"length":123,"sha256":"...","body":"first 2 KiB"}
//   {"id":1,"error":"...","code":"ERR_HTTP2_STREAM_ERROR","rstCode":2}
//   {"ev":"goaway","code":0} {"ev":"close"} {"ev":"connected","alpn":"h2","cn":"localhost"}
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let session;

function connect(c) {
  const url = new URL(c.origin);
  const secure = url.protocol === "https:";
  const options = { settings: { enablePush: !!c.push } };
  // a PROXY protocol header first, then TLS or cleartext HTTP/2 on the same socket
  options.createConnection = () => {
    const raw = net.connect({ host: url.hostname, port: Number(url.port) });
    if (c.proxy) raw.write(c.proxy);
    if (!secure) return raw;
    return tls.connect({
      socket: raw,
      ca: c.ca,
      cert: c.cert,
      key: c.key,
      servername: c.servername ?? (net.isIP(url.hostname) ? undefined : url.hostname),
      ALPNProtocols: ["h2"],
      ...(c.insecure ? { rejectUnauthorized: false } : {}),
    });
  };
  session = http2.connect(c.origin, options);
  session.on("connect", (_s, socket) => {
    const cn = socket.getPeerCertificate?.()?.subject?.CN;
    out({ ev: "connected", alpn: socket.alpnProtocol || "h2c", cn });
  });
  session.on("goaway", (code) => out({ ev: "goaway", code }));
  session.on("error", (e) => out({ ev: "error", error: e.message, code: e.code }));
  session.on("close", () => {
    out({ ev: "close" });
    if (closing) process.exit(0);
  });
}

function request(r) {
  let st;
  try {
    st = open(r);
  } catch (e) {
    return out({ id: r.id, error: e.message, code: e.code });
  }
  answer(r, st);
}

function open(r) {
  return session.request({
    ":path": r.path,
    ":method": r.method ?? "GET",
    ...(r.authority ? { ":authority": r.authority } : {}),
    ...(r.headers ?? {}),
  });
}

function answer(r, st) {
  const res = { id: r.id, status: 0, headers: {}, length: 0 };
  const hash = createHash("sha256");
  let text = "";
  st.on("response", (h) => {
    res.status = h[":status"];
    for (const [k, v] of Object.entries(h)) if (k !== "date") res.headers[k] = v;
  });
  st.on("data", (d) => {
    res.length += d.length;
    hash.update(d);
    if (text.length < 2048) text += d.toString("utf8");
  });
  st.on("end", () => out({ ...res, sha256: hash.digest("hex"), body: text.slice(0, 2048) }));
  st.on("error", (e) => out({ id: r.id, error: e.message, code: e.code, rstCode: st.rstCode }));
  const body = r.body === undefined ? undefined : r.body.repeat(r.repeat ?? 1);
  if (body === undefined) return st.end();
  if (r.afterResponse) return st.once("response", () => st.end(body));
  if (!r.slow) return st.end(body);
  const [pieces, ms] = r.slow;
  const size = Math.ceil(body.length / pieces);
  let i = 0;
  const next = () => {
    if (st.destroyed) return;
    if (i >= body.length) return st.end();
    st.write(body.slice(i, i + size));
    i += size;
    setTimeout(next, ms);
  };
  next();
}

let closing = false;
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  if (c.op === "connect") connect(c);
  else if (c.op === "request") request(c);
  else if (c.op === "close") {
    closing = true;
    if (session.closed || session.destroyed) process.exit(0);
    session.close();
  }
}
