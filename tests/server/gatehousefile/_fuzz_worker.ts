/**
 * The worker that fuzz inputs run in (see `_bounded.ts`): it adapts and formats one input per
 * message and reports what happened, so that the test thread can give every input its own
 * deadline and stop a worker that never answers.
 */
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";
import { formatGatehousefile } from "../../../lib/server/caddyfile/formatter.ts";
import type { FuzzOp, FuzzReport, Thrown } from "./_bounded.ts";

function thrown(e: unknown): Thrown {
  return e instanceof Error
    ? { name: e.name, plain: e.constructor === Error, message: e.message, stack: e.stack ?? "" }
    : { name: typeof e, plain: false, message: String(e), stack: "" };
}

const run: Record<FuzzOp, (src: string, report: FuzzReport) => void> = {
  adapt(src, report) {
    try {
      adaptGatehousefile(src, { filename: "Gatehousefile", files: noFiles, env: () => undefined });
      report.adapt = { ok: true };
    } catch (e) {
      report.adapt = { ok: false, error: thrown(e) };
    }
  },
  fmt(src, report) {
    try {
      report.fmt = { ok: true, out: formatGatehousefile(src) };
    } catch (e) {
      report.fmt = { ok: false, error: thrown(e) };
    }
  },
  // (for the harness's own test: an input that never finishes)
  spin() {
    for (;;) { /* never returns */ }
  },
};

/** The worker's global scope, as far as used here. */
const scope = self as unknown as {
  onmessage: (e: MessageEvent<{ id: number; src: string; ops: FuzzOp[] }>) => void;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { id, src, ops } = e.data;
  const report: FuzzReport = { id };
  for (const op of ops) run[op](src, report);
  scope.postMessage(report);
};
scope.postMessage({ ready: true });
