/**
 * Body buffering of `reverse_proxy` (`request_buffers`, `response_buffers`, and the older
 * `buffer_requests` / `buffer_responses` / `max_buffer_size`): up to the limit (-1 =
 * unlimited) is read into memory first; whatever is left streams after it.
 *
 * @module
 */
/** A body read up to a limit: the bytes, and the rest of the stream if it did not end. */
export interface Buffered {
  bytes: Uint8Array;
  rest: ReadableStream<Uint8Array> | null;
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** Reads up to `limit` bytes (-1 = all) of a stream. */
export async function bufferPrefix(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Buffered> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (limit < 0 || total < limit) {
    const { done, value } = await reader.read();
    if (done) return { bytes: concat(chunks, total), rest: null };
    if (limit >= 0 && total + value.length > limit) {
      const keep = limit - total;
      chunks.push(value.subarray(0, keep));
      total += keep;
      const tail = value.subarray(keep);
      return { bytes: concat(chunks, total), rest: restOf(reader, tail) };
    }
    chunks.push(value);
    total += value.length;
  }
  return { bytes: concat(chunks, total), rest: restOf(reader, null) };
}

function restOf(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array | null,
): ReadableStream<Uint8Array> {
  let pending = first;
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (pending && pending.length) {
        ctl.enqueue(pending);
        pending = null;
        return;
      }
      const { done, value } = await reader.read();
      if (done) ctl.close();
      else ctl.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The buffered bytes followed by the rest, as one stream (or the bytes alone). */
export function joined(b: Buffered): ReadableStream<Uint8Array> | Uint8Array {
  if (b.rest === null) return b.bytes;
  const { bytes, rest } = b;
  let first = true;
  const reader = rest.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (first) {
        first = false;
        if (bytes.length) {
          ctl.enqueue(bytes);
          return;
        }
      }
      const { done, value } = await reader.read();
      if (done) ctl.close();
      else ctl.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The buffer limit of a handler config: `request_buffers` or the older boolean form. */
export function bufferLimit(
  size: number | undefined,
  older: boolean | undefined,
  maxSize: number | undefined,
): number {
  if (size !== undefined && size !== 0) return size < 0 ? -1 : size;
  if (older) return maxSize && maxSize > 0 ? maxSize : -1;
  return 0;
}
