/**
 * A raw HTTP/1.1 client for tests that need what `fetch` will not send: a chosen Host header,
 * un-normalised request targets (`/../`, `%2e%2e`, backslashes), exact header bytes.
 */

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  text: string;
  /** The header block as received. */
  head: string;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const len = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(len);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

function dechunk(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let i = 0;
  const dec = new TextDecoder();
  while (i < data.length) {
    let j = i;
    while (j < data.length - 1 && !(data[j] === 13 && data[j + 1] === 10)) j++;
    const size = parseInt(dec.decode(data.subarray(i, j)).split(";")[0], 16);
    if (!size) break;
    parts.push(data.subarray(j + 2, j + 2 + size));
    i = j + 2 + size + 2;
  }
  return concat(parts);
}

function headerEnd(all: Uint8Array): number {
  for (let i = 0; i + 3 < all.length; i++) {
    if (all[i] === 13 && all[i + 1] === 10 && all[i + 2] === 13 && all[i + 3] === 10) return i;
  }
  return -1;
}

/** True once a whole response (by Content-Length or chunked framing) has arrived. */
function complete(all: Uint8Array, method: string): boolean {
  const end = headerEnd(all);
  if (end < 0) return false;
  const head = new TextDecoder().decode(all.subarray(0, end)).toLowerCase();
  const status = Number(head.split(" ")[1]);
  if (method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200)) {
    return true;
  }
  const body = all.subarray(end + 4);
  const cl = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (cl) return body.length >= Number(cl[1]);
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) {
    const tail = new TextDecoder().decode(body.subarray(Math.max(0, body.length - 7)));
    return /(^|\r\n)0\r\n\r\n$/.test(tail) || tail.endsWith("\r\n0\r\n\r\n") ||
      tail === "0\r\n\r\n";
  }
  return false;
}

/** Sends one request with `Connection: close` and reads the whole response. */
export async function raw(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string | Uint8Array,
): Promise<RawResponse> {
  const u = new URL(base);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  const bodyBytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const lines = [`${method} ${target} HTTP/1.1`];
  const hs = { host: u.host, connection: "close", ...headers };
  if (bodyBytes) hs["content-length" as keyof typeof hs] = String(bodyBytes.length);
  for (const [k, v] of Object.entries(hs)) lines.push(`${k}: ${v}`);
  const head = new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n");
  await conn.write(bodyBytes ? concat([head, bodyBytes]) : head);
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(65536);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      if (complete(concat(chunks), method)) break;
    }
  } catch {
    // connection reset: return what arrived
  } finally {
    conn.close();
  }
  const all = concat(chunks);
  let split = -1;
  for (let i = 0; i + 3 < all.length; i++) {
    if (all[i] === 13 && all[i + 1] === 10 && all[i + 2] === 13 && all[i + 3] === 10) {
      split = i;
      break;
    }
  }
  if (split < 0) {
    return { status: 0, headers: new Headers(), body: all, text: "", head: "" };
  }
  const headText = new TextDecoder().decode(all.subarray(0, split));
  const [statusLine, ...hl] = headText.split("\r\n");
  const h = new Headers();
  for (const l of hl) {
    const c = l.indexOf(":");
    h.append(l.slice(0, c).trim(), l.slice(c + 1).trim());
  }
  let b = all.subarray(split + 4);
  if (h.get("transfer-encoding")?.includes("chunked")) b = dechunk(b);
  return {
    status: Number(statusLine.split(" ")[1]),
    headers: h,
    body: b,
    text: new TextDecoder().decode(b),
    head: headText,
  };
}
