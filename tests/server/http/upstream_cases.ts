/**
 * Upstream answers a strict HTTP/1.1 client must refuse (RFC 9112), each with what the client
 * of the proxy must see: 502, a body aborted mid-way (the head was already relayed), or a
 * relayed answer. Shared by the plain and TLS upstream tests.
 */
import type { HostileCase } from "./hostile.ts";

/** What the proxy's client sees. */
export type Expect =
  | { status: 502 }
  | { abort: true }
  | { status: 200; body: string; contentLength?: string };

/** A hostile case and its expectation. */
export interface UpstreamCase extends HostileCase {
  expect: Expect;
}

const OK = "HTTP/1.1 200 OK\r\n";
const CHUNKED = `${OK}Transfer-Encoding: chunked\r\n\r\n`;
const bad: Expect = { status: 502 };
const abort: Expect = { abort: true };

/** Every case by name (names are URL path segments). */
export const CASES: Record<string, UpstreamCase> = {
  // Content-Length values.
  cl_abc: { reply: [`${OK}Content-Length: abc\r\n\r\nhello`], expect: bad },
  cl_negative: { reply: [`${OK}Content-Length: -1\r\n\r\nhello`], expect: bad },
  cl_plus: { reply: [`${OK}Content-Length: +3\r\n\r\nhello`], expect: bad },
  cl_inner_space: { reply: [`${OK}Content-Length: 3 3\r\n\r\nhello`], expect: bad },
  cl_hex: { reply: [`${OK}Content-Length: 0x3\r\n\r\nhello`], expect: bad },
  cl_empty: { reply: [`${OK}Content-Length: \r\n\r\nhello`], expect: bad },
  cl_overflow: { reply: [`${OK}Content-Length: 99999999999999999999\r\n\r\nhello`], expect: bad },
  cl_conflict: {
    reply: [`${OK}Content-Length: 3\r\nContent-Length: 5\r\n\r\nhello`],
    expect: bad,
  },
  cl_conflict_list: { reply: [`${OK}Content-Length: 3, 5\r\n\r\nhello`], expect: bad },
  cl_same_lines: {
    reply: [`${OK}Content-Length: 3\r\nContent-Length: 3\r\n\r\nhel`],
    expect: { status: 200, body: "hel", contentLength: "3" },
  },
  cl_same_list: {
    reply: [`${OK}Content-Length: 3, 3\r\n\r\nhel`],
    expect: { status: 200, body: "hel", contentLength: "3" },
  },
  cl_and_te: {
    reply: [`${OK}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n`],
    expect: bad,
  },
  // Transfer-Encoding other than one final "chunked".
  te_gzip: { reply: [`${OK}Transfer-Encoding: gzip\r\n\r\nhello`], expect: bad },
  te_identity: { reply: [`${OK}Transfer-Encoding: identity\r\n\r\nhello`], expect: bad },
  te_chunked_gzip: {
    reply: [`${OK}Transfer-Encoding: chunked, gzip\r\n\r\n3\r\nhel\r\n0\r\n\r\n`],
    expect: bad,
  },
  te_gzip_chunked: {
    reply: [`${OK}Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n`],
    expect: bad,
  },
  te_twice: {
    reply: [
      `${OK}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n`,
    ],
    expect: bad,
  },
  te_http10: {
    reply: ["HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n"],
    expect: bad,
  },
  te_chunked_upper: {
    reply: [`${OK}Transfer-Encoding: CHUNKED\r\n\r\n3\r\nhel\r\n0\r\n\r\n`],
    expect: { status: 200, body: "hel" },
  },
  // Chunked bodies: the head went out, so the body is cut short.
  chunk_bad_hex: { reply: [`${CHUNKED}zz\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_negative: { reply: [`${CHUNKED}-3\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_empty_size: { reply: [`${CHUNKED}\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_space_in_size: { reply: [`${CHUNKED}1 1\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_overflow: {
    reply: [`${CHUNKED}fffffffffffffffffff\r\nhel\r\n0\r\n\r\n`],
    expect: abort,
  },
  chunk_ext_ctl: { reply: [`${CHUNKED}3;a\x01b\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_ext_unterminated: {
    reply: [`${CHUNKED}3;a="x\r\nhel\r\n0\r\n\r\n`],
    expect: abort,
  },
  chunk_ext_empty_name: { reply: [`${CHUNKED}3;=x\r\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_ext_ok: {
    reply: [`${CHUNKED}3 ; name=val;q="x y" ;flag\r\nhel\r\n0;last\r\n\r\n`],
    expect: { status: 200, body: "hel" },
  },
  chunk_line_too_long: {
    reply: [`${CHUNKED}3;${"a".repeat(10000)}\r\nhel\r\n0\r\n\r\n`],
    expect: abort,
  },
  chunk_no_crlf_after_data: { reply: [`${CHUNKED}3\r\nhelX\r\n0\r\n\r\n`], expect: abort },
  chunk_lf_after_data: { reply: [`${CHUNKED}3\r\nhel\n0\r\n\r\n`], expect: abort },
  chunk_bare_lf_size: { reply: [`${CHUNKED}3\nhel\r\n0\r\n\r\n`], expect: abort },
  chunk_truncated_close: { reply: [`${CHUNKED}5\r\nhe`], close: true, expect: abort },
  chunk_no_last_close: { reply: [`${CHUNKED}3\r\nhel\r\n`], close: true, expect: abort },
  trailer_no_colon: { reply: [`${CHUNKED}3\r\nhel\r\n0\r\nbad trailer\r\n\r\n`], expect: abort },
  trailer_fold: { reply: [`${CHUNKED}3\r\nhel\r\n0\r\nX-T: a\r\n b\r\n\r\n`], expect: abort },
  trailer_nul: { reply: [`${CHUNKED}3\r\nhel\r\n0\r\nX-T: a\0b\r\n\r\n`], expect: abort },
  trailer_huge: {
    reply: [`${CHUNKED}3\r\nhel\r\n0\r\nX-T: ${"t".repeat(70000)}\r\n\r\n`],
    expect: abort,
  },
  trailer_ok: {
    reply: [`${CHUNKED}3\r\nhel\r\n0\r\nX-T: 1\r\n\r\n`],
    expect: { status: 200, body: "hel" },
  },
  // Heads.
  head_too_large: {
    reply: [`${OK}X-Big: ${"b".repeat(70000)}\r\nContent-Length: 2\r\n\r\nhi`],
    expect: bad,
  },
  head_too_many_lines: {
    reply: [`${OK}${"X-N: 1\r\n".repeat(300)}Content-Length: 2\r\n\r\nhi`],
    expect: bad,
  },
  obs_fold: { reply: [`${OK}X-A: a\r\n b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  fold_after_status: { reply: [`${OK} X-A: a\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  bare_lf_head: { reply: ["HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"], expect: bad },
  bare_lf_field: { reply: [`${OK}X-A: a\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  bare_cr_head: { reply: [`HTTP/1.1 200 OK\rContent-Length: 2\r\n\r\nhi`], expect: bad },
  bare_cr_value: { reply: [`${OK}X-A: a\rb\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  nul_value: { reply: [`${OK}X-A: a\0b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  ctl_value: { reply: [`${OK}X-A: a\x07b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  status_4_digits: { reply: ["HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_2_digits: { reply: ["HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_letters: { reply: ["HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_600: { reply: ["HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_http2: { reply: ["HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_lowercase: { reply: ["http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_garbage: { reply: ["SSH-2.0-OpenSSH_9.2\r\n\r\n"], expect: bad },
  status_ctl_reason: { reply: ["HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\nhi"], expect: bad },
  status_no_reason: {
    reply: ["HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nhi"],
    expect: { status: 200, body: "hi" },
  },
  name_space: { reply: [`${OK}X A: b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  name_paren: { reply: [`${OK}X(A): b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  name_space_before_colon: {
    reply: [`${OK}X-A : b\r\nContent-Length: 2\r\n\r\nhi`],
    expect: bad,
  },
  name_empty: { reply: [`${OK}: b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  no_colon: { reply: [`${OK}NoColon\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  name_non_ascii: { reply: [`${OK}X-\xe9: b\r\nContent-Length: 2\r\n\r\nhi`], expect: bad },
  // Early closes.
  close_at_once: { reply: [], close: true, expect: bad },
  close_mid_status: { reply: ["HTTP/1.1 20"], close: true, expect: bad },
  close_mid_head: { reply: [`${OK}Content-Le`], close: true, expect: bad },
  close_mid_small_body: {
    reply: [`${OK}Content-Length: 10\r\n\r\nhi`],
    close: true,
    expect: bad,
  },
  close_mid_large_body: {
    reply: [`${OK}Content-Length: 1000000\r\n\r\n${"x".repeat(70000)}`],
    close: true,
    expect: abort,
  },
  close_delimited: {
    reply: [`${OK}\r\nuntil close`],
    close: true,
    expect: { status: 200, body: "until close" },
  },
  // 1xx.
  continue_then_ok: {
    reply: ["HTTP/1.1 100 Continue\r\n\r\n", `${OK}Content-Length: 2\r\n\r\nhi`],
    expect: { status: 200, body: "hi" },
  },
  early_hints_then_ok: {
    reply: [
      "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n",
      `${OK}Content-Length: 2\r\n\r\nhi`,
    ],
    expect: { status: 200, body: "hi" },
  },
  too_many_1xx: {
    reply: ["HTTP/1.1 100 Continue\r\n\r\n".repeat(20), `${OK}Content-Length: 2\r\n\r\nhi`],
    expect: bad,
  },
  bad_1xx_head: {
    reply: ["HTTP/1.1 100 Continue\r\nX A: b\r\n\r\n", `${OK}Content-Length: 2\r\n\r\nhi`],
    expect: bad,
  },
  unasked_101: {
    reply: ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"],
    expect: bad,
  },
  // Slow answers: the other sites keep answering while these hold their upstream.
  slow_head: {
    reply: [`${OK}Content-Length: 2\r\n`, { delay: 1500 }, "\r\nhi"],
    expect: { status: 200, body: "hi" },
  },
  slow_body: {
    reply: [`${OK}Content-Length: 100000\r\n\r\n`, "a", { delay: 1500 }, "b".repeat(99999)],
    expect: { status: 200, body: "a" + "b".repeat(99999) },
  },
};
