// An upstream that takes `Upgrade: h2c` (RFC 7540 section 3.2), run with the `node` on PATH:
// node:http answers HTTP/1.1 requests, and an upgrade request naming h2c gets
// `101 Switching Protocols` and its connection handed to a node:http2 server, which then
// answers every HTTP/2 stream sent through that tunnel (`/switch-anyway` switches whatever
// protocol the request names). Each request it sees is written to
// stdout as one JSON line: {via: "h1" | "upgrade" | "h2", path, headers}; the first line is
// {port}.
import http from "node:http";
import http2 from "node:http2";

const log = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const names = (raw) => {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i].toLowerCase(), raw[i + 1]]);
  return out;
};

const h2 = http2.createServer();
h2.on("stream", (stream, headers) => {
  log({ via: "h2", path: headers[":path"], headers: [] });
  stream.respond({ ":status": 200 });
  stream.end(`h2 ${headers[":path"]}`);
});
h2.on("sessionError", () => {});

const server = http.createServer((req, res) => {
  log({ via: "h1", path: req.url, headers: names(req.rawHeaders) });
  res.end(`ok ${req.url}`);
});
server.on("upgrade", (req, socket, head) => {
  log({ via: "upgrade", path: req.url, headers: names(req.rawHeaders) });
  socket.on("error", () => {});
  // `/switch-anyway` switches to h2c whatever the request asked for
  const h2c = /(^|,)\s*h2c\s*(,|$)/i.test(req.headers.upgrade ?? "");
  if (!h2c && req.url !== "/switch-anyway") return socket.destroy();
  socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
  if (head.length) socket.unshift(head);
  h2.emit("connection", socket);
});
server.listen(0, "127.0.0.1", () => log({ port: server.address().port }));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
