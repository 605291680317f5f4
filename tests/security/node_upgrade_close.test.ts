/**
 * The `node` engine answers an upgrade request that no handler takes over on the raw socket
 * (with `Connection: close`), then closes it. Before, it only ended its side: a client that
 * sent more bytes after the answer left the socket unread and open for good, so each such
 * connection held a descriptor of the server process (and kept a graceful stop waiting) —
 * any client could pile them up with `Connection: Upgrade` on any route. Through a real
 * `gatehouse run` process: after 20 such connections (half of them refused by the listener for
 * a malformed Host), the process holds no more sockets than before them.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";
import { until } from "../server/fixtures/helpers.ts";

/** Sockets the process holds (its descriptors that are sockets). */
function sockets(pid: number): number {
  let n = 0;
  for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      if (Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`).startsWith("socket:")) n++;
    } catch { /* closed meanwhile */ }
  }
  return n;
}

const UPGRADE = "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: foo\r\n\r\n";
/** Its Host is malformed: the listener answers 400 itself. */
const BAD_UPGRADE = "GET / HTTP/1.1\r\nHost: a b\r\nConnection: Upgrade\r\nUpgrade: foo\r\n\r\n";

/** An upgrade request; once the answer has ended, more bytes; then the close. */
async function upgradeThenMore(port: number, more: boolean, request = UPGRADE): Promise<string> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port });
  const enc = new TextEncoder();
  let text = "";
  try {
    await c.write(enc.encode(request));
    const buf = new Uint8Array(4096);
    while (true) {
      const n = await c.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    if (more) await c.write(enc.encode("more bytes after the answer")).catch(() => 0);
  } finally {
    c.close();
  }
  return text;
}

Deno.test("node engine: an upgrade answered without a switch closes its connection, whatever the client sends after", async () => {
  const g = await startGatehouse({
    site: {
      listener_engine: "node",
      routes: [{ handle: [{ handler: "static_response", body: "no switch here" }] }],
    },
  });
  try {
    const port = g.ports.site;
    assert.match(await upgradeThenMore(port, false), /^HTTP\/1\.1 200 [^]*no switch here$/);
    await until(() => sockets(g.pid) > 0, 15000, "the process's sockets");
    const baseline = sockets(g.pid);
    for (let i = 0; i < 10; i++) {
      assert.match(await upgradeThenMore(port, true), /^HTTP\/1\.1 200 /);
      assert.match(await upgradeThenMore(port, true, BAD_UPGRADE), /^HTTP\/1\.1 400 /);
    }
    await until(() => sockets(g.pid) <= baseline, 15000, `sockets back to ${baseline}`);
  } finally {
    await g.stop();
  }
});
