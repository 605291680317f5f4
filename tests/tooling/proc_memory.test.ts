/**
 * The benches' memory measure (`memoryOf` of `bench/http/_proc.ts`): the union of the resident
 * pages of several processes counts each physical page once, so two processes of one program
 * (which share the binary's pages) are less than the sum of their RSS and more than either
 * alone, and one process is its own RSS.
 */
import assert from "node:assert/strict";
import { memoryOf } from "../../bench/http/_proc.ts";

const MIB = 1024;
/** What each process holds of its own: touched, so resident. */
const OWN_MIB = 8;

/** A Deno process that touches `OWN_MIB` of its own memory, says "ready", then waits. */
async function holder(script: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  let said = "";
  while (!said.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the holder ended before it was ready: ${said}`);
    said += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    pid: child.pid,
    async end() {
      await child.stdin.close();
      await child.stdout.cancel();
      await child.status;
    },
  };
}

Deno.test({
  name: "bench memory: the union of two processes' pages counts their shared pages once",
  // page frame numbers in /proc/<pid>/pagemap are shown to root (CAP_SYS_ADMIN) only
  ignore: Deno.build.os !== "linux" || Deno.uid() !== 0,
  async fn() {
    const dir = await Deno.makeTempDir();
    const script = `${dir}/hold.ts`;
    await Deno.writeTextFile(
      script,
      `const own = new Uint8Array(${OWN_MIB} << 20);
for (let i = 0; i < own.length; i += 4096) own[i] = 1 + (i >> 12) % 200;
(globalThis as { own?: Uint8Array }).own = own;
console.log("ready");
await Deno.stdin.read(new Uint8Array(1));
`,
    );
    const a = await holder(script);
    const b = await holder(script);
    try {
      const ma = memoryOf([a.pid]);
      const mb = memoryOf([b.pid]);
      const both = memoryOf([a.pid, b.pid]);
      assert.equal(both.processes, 2);
      assert.ok(ma.union !== undefined && mb.union !== undefined && both.union !== undefined);
      // one process: its own RSS, within a couple of pages (the zero page, the vDSO)
      for (const m of [ma, mb]) {
        assert.ok(Math.abs(m.union! - m.rss) <= 8, `union ${m.union} KiB, RSS ${m.rss} KiB`);
        assert.equal(m.shared, 0);
      }
      // two: PSS ≤ union ≤ RSS, and the binary's pages once
      assert.ok(both.pss <= both.union, `PSS ${both.pss} KiB, union ${both.union} KiB`);
      assert.ok(both.union < both.rss, `union ${both.union} KiB, RSS ${both.rss} KiB`);
      assert.ok(both.shared! >= 10 * MIB, `shared ${both.shared} KiB`);
      assert.ok(Math.abs(both.rss - (ma.rss + mb.rss)) <= 64, "the processes stood still");
      // more than the larger alone: the other one's own pages are resident too
      const larger = Math.max(ma.union, mb.union);
      assert.ok(
        both.union >= larger + OWN_MIB * MIB - 64,
        `union ${both.union} KiB, the larger alone ${larger} KiB`,
      );
      // the union is the two unions less what they share
      assert.ok(Math.abs(both.union - (ma.union + mb.union - both.shared!)) <= 64);
    } finally {
      await a.end();
      await b.end();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("bench memory: processes that are gone count nothing", () => {
  const m = memoryOf([2 ** 22 + 1]); // above Linux's largest pid
  assert.deepEqual([m.processes, m.rss, m.pss], [0, 0, 0]);
});
