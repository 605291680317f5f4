/**
 * Web `Request`s and `Response`s on node's HTTP server, for the node listener engine: a
 * `Request` from a node request (Host and absolute-form rules of `net/host.ts`), a
 * `Response` sent on a node response (one-chunk bodies with Content-Length, longer ones
 * streamed as they come) or on a raw socket (an upgrade request nobody took over).
 *
 * @module
 */
import type http from "node:http";
import type net from "node:net";
import { recordReceivedURL, requestURL } from "../../net/host.ts";
import { statusText } from "../../net/status.ts";
import { readableOf, writeTo } from "./streams.ts";

const BODYLESS = (status: number) => status === 204 || status === 304 || status < 200;

/** Node header object of a Response (list values joined, Set-Cookie kept apart). */
function nodeHeaders(h: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of h) if (k !== "set-cookie") out[k] = v;
  const cookies = h.getSetCookie();
  if (cookies.length) out["set-cookie"] = cookies;
  return out;
}

const LATER = Symbol("later");

/** Resolves after the event loop had one turn (what is already on its way has arrived). */
function nextTurn(): Promise<typeof LATER> {
  return new Promise((r) => setTimeout(() => r(LATER), 0));
}

/**
 * Sends a Response on a node ServerResponse. A body that turns out to be one chunk is sent
 * with Content-Length (as Deno.serve does); a longer one streams chunked unless the handler set
 * a length.
 */
export async function send(
  res: http.ServerResponse,
  response: Response,
  head: boolean,
): Promise<void> {
  const status = response.status;
  const headers = nodeHeaders(response.headers);
  const body = response.body;
  const writeHead = () => res.writeHead(status, response.statusText || statusText(status), headers);
  if (body === null || head || BODYLESS(status)) {
    if (body !== null) body.cancel().catch(() => {});
    if (body === null && !head && !BODYLESS(status) && headers["content-length"] === undefined) {
      headers["content-length"] = "0";
    }
    writeHead();
    res.end();
    return;
  }
  const reader = body.getReader();
  let gone = false;
  res.on("close", () => {
    if (!res.writableFinished) {
      gone = true;
      reader.cancel().catch(() => {});
    }
  });
  try {
    const first = await reader.read();
    if (first.done) {
      if (headers["content-length"] === undefined) headers["content-length"] = "0";
      writeHead();
      res.end();
      return;
    }
    // One chunk that ends at once goes with Content-Length; a body whose next chunk is not
    // there yet (a stream answering as the request body arrives) starts at once.
    const pending = reader.read();
    const second = await Promise.race([pending, nextTurn()]);
    if (second !== LATER && second.done) {
      if (headers["content-length"] === undefined) {
        headers["content-length"] = String(first.value.byteLength);
      }
      writeHead();
      res.end(first.value);
      return;
    }
    writeHead();
    if (!(await writeTo(res, first.value))) return;
    const next = second === LATER ? await pending : second;
    if (next.done) {
      res.end();
      return;
    }
    if (!(await writeTo(res, next.value))) return;
    while (!gone) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!(await writeTo(res, value))) return;
    }
    res.end();
  } catch (e) {
    if (!res.headersSent && !gone) {
      // Nothing was sent yet: answer with the error's status (502 for a broken upstream
      // response), never with the handler's status and a body that is not there.
      const s = (e as { status?: unknown })?.status;
      const code = typeof s === "number" && s >= 500 && s <= 599 ? s : 500;
      res.writeHead(code, statusText(code), { connection: "close", "content-length": "0" });
      res.end();
      return;
    }
    // The body failed mid-way: the client must not take a truncated body for a whole one.
    res.destroy();
  }
}

/** Sends a Response on a raw socket (an upgrade request nobody took over) and closes it. */
export async function sendRaw(
  socket: net.Socket,
  response: Response,
  head: boolean,
): Promise<void> {
  const status = response.status;
  let text = `HTTP/1.1 ${status} ${response.statusText || statusText(status)}\r\n`;
  for (const [k, v] of response.headers) {
    if (k === "connection" || k === "transfer-encoding" || k === "keep-alive") continue;
    text += `${k}: ${v}\r\n`;
  }
  text += "connection: close\r\n\r\n";
  socket.write(text);
  const body = response.body;
  if (body !== null) {
    if (head || BODYLESS(status)) await body.cancel().catch(() => {});
    else {
      try {
        for await (const chunk of body) if (!(await writeTo(socket, chunk))) break;
      } catch { /* body failed: the close ends it */ }
    }
  }
  // Closed once written, as node:http closes after `Connection: close` (destroySoon): with
  // end() alone, the socket nobody reads any more stayed open for good when the client sent
  // more bytes, holding a descriptor and the server's shutdown.
  socket.destroySoon();
}

export function toRequest(
  req: http.IncomingMessage,
  scheme: string,
  fallbackHost: string,
  withBody: boolean,
): Request | null {
  const hosts: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === "host") hosts.push(raw[i + 1]);
  }
  const target = requestURL(req.url ?? "/", hosts, scheme, fallbackHost);
  if (target === null) return null;
  const method = req.method ?? "GET";
  const hasBody = withBody && method !== "GET" && method !== "HEAD" &&
    (req.headers["transfer-encoding"] !== undefined ||
      (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0"));
  if (!hasBody) req.resume();
  const url = target.url;
  const request = hasBody
    ? new Request(url, { method, body: readableOf(req), duplex: "half" } as RequestInit)
    : method === "GET"
    ? new Request(url)
    : new Request(url, { method });
  // Appending to the request's own list is cheaper than building a Headers to be copied.
  const headers = request.headers;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // An absolute-form target's authority replaces Host.
  if (target.host !== null) headers.set("host", target.host);
  recordReceivedURL(request, url);
  return request;
}
