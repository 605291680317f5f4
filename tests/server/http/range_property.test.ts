/**
 * Properties of `Range` handling: `planRange` against a model (the bytes a partial answer
 * covers are exactly the satisfiable bytes asked for, in at most 100 disjoint, non-adjacent
 * ranges), and through a real `gatehouse run` process: any Range header gets 200, 206 with
 * consistent Content-Range, Content-Length and bytes, or 416 with `bytes *` and the size.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { planRange, RANGE_LIMITS } from "../../../lib/server/http/handlers/file_server/range.ts";
import { startGatehouse } from "./hostile.ts";
import { raw } from "./raw.ts";

const specArb = (size: number) =>
  fc.oneof(
    fc.tuple(fc.nat({ max: size + 5 }), fc.nat({ max: size + 5 })).map(([a, b]) => `${a}-${b}`),
    fc.nat({ max: size + 5 }).map((a) => `${a}-`),
    fc.nat({ max: size + 5 }).map((n) => `-${n}`),
    fc.constantFrom("", " ", "x", "1", "-", "1-x", "--1", "+1-2", " 3 - 4 "),
  );
const headerArb = fc.integer({ min: 0, max: 300 }).chain((size) =>
  fc.tuple(
    fc.constant(size),
    fc.constantFrom("bytes=", "bytes=", "bytes=", "Bytes=", "items=", "bytes", ""),
    fc.array(specArb(size), { maxLength: 150 }),
  )
);

/** The model: what each spec means on its own. */
function model(size: number, specs: string[]) {
  const wanted = new Set<number>();
  let invalid = false;
  let unsat = false;
  let sum = 0;
  let count = 0;
  for (const raw of specs) {
    const s = raw.trim();
    if (!s) continue;
    const m = /^(\d*)\s*-\s*(\d*)$/.exec(s);
    if (!m || (m[1] === "" && m[2] === "")) {
      invalid = true;
      continue;
    }
    let a: number, b: number;
    if (m[1] === "") {
      const n = Math.min(Number(m[2]), size);
      if (n === 0) {
        unsat = true;
        continue;
      }
      a = size - n;
      b = size - 1;
    } else {
      a = Number(m[1]);
      b = m[2] === "" ? Infinity : Number(m[2]);
      if (b < a) {
        invalid = true;
        continue;
      }
      if (a >= size) {
        unsat = true;
        continue;
      }
      b = Math.min(b, size - 1);
    }
    count++;
    sum += b - a + 1;
    for (let i = a; i <= b; i++) wanted.add(i);
  }
  return { wanted, invalid, unsat, sum, count };
}

Deno.test("planRange: partial answers cover exactly the bytes asked, disjoint, at most 100 ranges", () => {
  fc.assert(
    fc.property(headerArb, ([size, unit, specs]) => {
      const header = unit + specs.join(",");
      const plan = planRange(header, size);
      if (!/^bytes=/i.test(header)) {
        assert.equal(plan.kind, header.includes("=") || header === "" ? "full" : "invalid");
        return;
      }
      const m = model(size, specs);
      if (m.invalid) return assert.equal(plan.kind, "invalid", header);
      if (m.count === 0) return assert.equal(plan.kind, m.unsat ? "unsatisfiable" : "full");
      if (m.sum > size) return assert.equal(plan.kind, "full", header);
      if (plan.kind === "full") {
        // Only when coalescing left too many ranges.
        assert.ok(m.count > RANGE_LIMITS.maxRanges, header);
        return;
      }
      assert.equal(plan.kind, "partial", header);
      if (plan.kind !== "partial") return;
      assert.ok(plan.ranges.length <= RANGE_LIMITS.maxRanges);
      const covered = new Set<number>();
      const sorted = [...plan.ranges].sort((a, b) => a.start - b.start);
      for (let i = 0; i < sorted.length; i++) {
        const r = sorted[i];
        assert.ok(r.length >= 1 && r.start >= 0 && r.start + r.length <= size);
        if (i > 0) {
          const p = sorted[i - 1];
          assert.ok(p.start + p.length < r.start, "disjoint and not adjacent");
        }
        for (let j = r.start; j < r.start + r.length; j++) covered.add(j);
      }
      assert.deepEqual([...covered].sort((a, b) => a - b), [...m.wanted].sort((a, b) => a - b));
    }),
    { numRuns: 3000, interruptAfterTimeLimit: 20000 },
  );
});

Deno.test("Range through a process: 200, 206 with consistent Content-Range and bytes, or 416", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-range-" });
  const data = new Uint8Array(5000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 256;
  await Deno.writeFile(`${dir}/f.bin`, data);
  await Deno.writeFile(`${dir}/empty.bin`, new Uint8Array(0));
  const g = await startGatehouse({
    files: { routes: [{ handle: [{ handler: "file_server", root: dir }] }] },
  });
  const base = `http://127.0.0.1:${g.ports.files}`;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/f.bin", "/f.bin", "/empty.bin"),
        fc.constantFrom("bytes=", "bytes=", "items=", "bytes"),
        fc.array(specArb(5000), { maxLength: 120 }),
        async (path, unit, specs) => {
          const file = path === "/f.bin" ? data : new Uint8Array(0);
          const range = unit + specs.join(",");
          const r = await raw(base, "GET", path, { range });
          const what = `${path} ${range}`;
          assert.ok([200, 206, 416].includes(r.status), `${what}: ${r.status}`);
          if (r.status === 200) return assert.deepEqual(r.body, file, what);
          if (r.status === 416) {
            return assert.equal(r.headers.get("content-range"), `bytes */${file.length}`, what);
          }
          assert.equal(Number(r.headers.get("content-length")), r.body.length, what);
          const single = r.headers.get("content-range");
          const check = (cr: string, bytes: Uint8Array) => {
            const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(cr);
            assert.ok(m, `${what}: ${cr}`);
            const [a, b, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
            assert.equal(total, file.length);
            assert.ok(a <= b && b < file.length, what);
            assert.deepEqual(bytes, file.subarray(a, b + 1), what);
          };
          if (single) return check(single, r.body);
          const boundary = /boundary=(\S+)/.exec(r.headers.get("content-type") ?? "")?.[1];
          assert.ok(boundary, what);
          const text = String.fromCharCode(...r.body);
          const parts = text.split(`--${boundary}`).slice(1, -1);
          assert.ok(parts.length >= 2 && parts.length <= RANGE_LIMITS.maxRanges, what);
          for (const part of parts) {
            const [head, ...rest] = part.split("\r\n\r\n");
            const cr = /Content-Range: (.*)/.exec(head)![1].trim();
            const bytes = rest.join("\r\n\r\n").replace(/\r\n$/, "");
            check(cr, Uint8Array.from(bytes, (ch) => ch.charCodeAt(0)));
          }
        },
      ),
      { numRuns: 120, interruptAfterTimeLimit: 60000 },
    );
  } finally {
    await g.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
