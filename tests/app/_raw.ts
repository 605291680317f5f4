/**
 * Raw HTTP/1.1 over a TCP socket, for requests `fetch` will not send (a forged `Host`, a lying
 * or missing length, a body that never ends) and for reading the answer as the bytes came.
 */

export interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Reads one response head (and its body, by Content-Length or chunked) from `conn`. */
export async function readResponse(conn: Deno.Conn): Promise<RawResponse> {
  let buf: Uint8Array = new Uint8Array(0);
  const more = async (): Promise<boolean> => {
    const chunk = new Uint8Array(65536);
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
    return true;
  };
  let end = -1;
  while ((end = indexOf(buf, "\r\n\r\n")) < 0) {
    if (!(await more())) throw new Error(`connection closed before a response head`);
  }
  const head = decoder.decode(buf.subarray(0, end)).split("\r\n");
  const status = Number(head[0].split(" ")[1]);
  const headers = new Headers();
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  buf = buf.subarray(end + 4);
  let body: Uint8Array = new Uint8Array(0);
  if (headers.get("transfer-encoding")?.includes("chunked")) {
    const parts: Uint8Array[] = [];
    for (;;) {
      let line: number;
      while ((line = indexOf(buf, "\r\n")) < 0) if (!(await more())) break;
      line = indexOf(buf, "\r\n");
      if (line < 0) break;
      const size = parseInt(decoder.decode(buf.subarray(0, line)), 16);
      while (buf.length < line + 2 + size + 2) if (!(await more())) break;
      parts.push(buf.slice(line + 2, line + 2 + size));
      buf = buf.subarray(line + 2 + size + 2);
      if (size === 0) break;
    }
    body = concat(parts);
  } else if (headers.has("content-length")) {
    const length = Number(headers.get("content-length"));
    while (buf.length < length) if (!(await more())) break;
    body = buf.slice(0, length);
  } else if (status >= 200 && status !== 204 && status !== 304) {
    while (await more()) { /* until close */ }
    body = buf;
  }
  return { status, headers, body: decoder.decode(body) };
}

/** Sends `head` (CRLF lines, without the blank line) and `body`, reads the response. */
export async function rawRequest(
  port: number,
  head: string[],
  body: string | Uint8Array = "",
): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = typeof body === "string" ? encoder.encode(body) : body;
    await writeAll(conn, encoder.encode(head.join("\r\n") + "\r\n\r\n"));
    if (bytes.length) await writeAll(conn, bytes);
    return await readResponse(conn);
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/** A request with a forged `Host`: `fields` are extra header lines. */
export function withHost(
  port: number,
  method: string,
  target: string,
  host: string,
  fields: Record<string, string> = {},
  body = "",
): Promise<RawResponse> {
  const head = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, "Connection: close"];
  for (const [k, v] of Object.entries(fields)) head.push(`${k}: ${v}`);
  if (body || method === "POST") head.push(`Content-Length: ${encoder.encode(body).length}`);
  return rawRequest(port, head, body);
}

export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function indexOf(buf: Uint8Array, text: string): number {
  const needle = encoder.encode(text);
  outer: for (let i = 0; i + needle.length <= buf.length; i++) {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/**
 * Like `fetch(path, init)` against 127.0.0.1:`port`, but with the `Host` header `host` (which
 * `fetch` does not let a caller set).
 */
export async function fetchAs(
  port: number,
  host: string,
  path: string,
  init: RequestInit = {},
): Promise<RawResponse> {
  const req = new Request(`http://${host}${path}`, init);
  const body = req.body ? new Uint8Array(await req.arrayBuffer()) : new Uint8Array(0);
  const head = [`${req.method} ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close"];
  for (const [k, v] of req.headers) head.push(`${k}: ${v}`);
  if (body.length || req.method === "POST") head.push(`Content-Length: ${body.length}`);
  return rawRequest(port, head, body);
}
