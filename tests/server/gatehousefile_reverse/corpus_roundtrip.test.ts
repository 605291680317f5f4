/**
 * The round trip over Caddy's adapt corpus (`../shared/caddyfile-corpus`, read in place):
 * for every case whose expected output is JSON, `adapt(reverse(json))` must equal `json` —
 * with every adapter that itself turns the case's Caddyfile into that JSON (Caddy 2.6.2, and
 * ours once registered). The counts and the reason of each other case are printed.
 */
import assert from "node:assert/strict";
import { reverseConfig } from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { diffJson } from "../../../lib/server/adapters/gatehousefile/reverse/diff.ts";
import { formatGatehousefile } from "../../../lib/server/caddyfile/formatter.ts";
import { type AdaptFn, caddyAdapt, hasCaddy, ourAdapt } from "./_adapters.ts";
import { ROOT } from "../fixtures/helpers.ts";

const CORPUS = `${ROOT}../shared/caddyfile-corpus/corpus`;

interface Case {
  name: string;
  caddyfile: string;
  json: unknown;
}

function corpusCases(): Case[] | undefined {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(CORPUS)];
  } catch {
    return undefined;
  }
  const cases: Case[] = [];
  for (const e of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (!e.isFile || !/\.(caddyfiletest|txt)$/.test(e.name)) continue;
    const text = Deno.readTextFileSync(`${CORPUS}/${e.name}`);
    const i = text.indexOf("\n----------\n");
    if (i < 0) continue;
    const out = text.slice(i + 12).trim();
    if (!out.startsWith("{")) continue;
    cases.push({
      name: e.name.replace(/\.(caddyfiletest|txt)$/, ""),
      caddyfile: text.slice(0, i + 1),
      json: JSON.parse(out),
    });
  }
  return cases;
}

/** Runs `fn` over items with at most `n` at a time. */
async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  }));
  return out;
}

async function equalAfter(adapt: AdaptFn, text: string, json: unknown): Promise<string> {
  let back: unknown;
  try {
    back = await adapt(text);
  } catch (e) {
    return `does not adapt: ${(e as Error).message.slice(0, 200)}`;
  }
  const d = diffJson(json, back, 1);
  return d.length ? `${d[0].path}: ${d[0].message}` : "";
}

/**
 * Corpus cases our adapter reproduces but the JSON → Gatehousefile direction does not write
 * back yet, each with its reason (the reverse reports these parts as having no form); none at
 * present. A case that starts to round-trip is printed so it can leave the list; a new failure
 * fails the test.
 */
const KNOWN_GAPS: Record<string, string> = {};

async function roundTrip(
  label: string,
  adapt: AdaptFn,
  cases: Case[],
  gaps: Record<string, string> = {},
): Promise<void> {
  const results = await pool(cases, 2, async (c) => {
    // the cases this adapter supports: it turns the Caddyfile into the expected JSON
    const supported = (await equalAfter(adapt, c.caddyfile, c.json)) === "";
    const r = reverseConfig(c.json);
    let reason = "";
    if (formatGatehousefile(r.text) !== (r.text === "" ? "\n" : r.text)) reason = "not formatted";
    if (!reason && r.problems.length) {
      reason = `no form: ${r.problems[0].path}: ${r.problems[0].message}`;
    }
    if (!reason) reason = await equalAfter(adapt, r.text, c.json);
    return { name: c.name, supported, reason };
  });
  const ok = results.filter((r) => r.reason === "");
  const bad = results.filter((r) => r.reason !== "");
  console.log(
    `${label}: ${ok.length} of ${results.length} corpus configs round-trip; ` +
      `${results.filter((r) => r.supported).length} are adapted exactly by this adapter`,
  );
  for (const r of bad) console.log(`  ${r.supported ? "SUPPORTED " : ""}${r.name}: ${r.reason}`);
  const fixed = ok.filter((r) => gaps[r.name]).map((r) => r.name);
  if (fixed.length) console.log(`  now round-trip (remove from KNOWN_GAPS): ${fixed.join(", ")}`);
  const supportedBad = bad.filter((r) => r.supported && !gaps[r.name]).map((r) =>
    `${r.name}: ${r.reason}`
  );
  assert.deepEqual(supportedBad, [], "configs the adapter supports must round-trip");
}

const cases = corpusCases();

Deno.test({
  name: "corpus round trip through caddy adapt (2.6.2) for the configs it supports",
  ignore: !cases || !hasCaddy(),
  sanitizeResources: false,
  fn: async () => {
    await roundTrip("caddy 2.6.2", caddyAdapt, cases!);
  },
});

Deno.test({
  name: "corpus round trip through our gatehousefile adapter for the configs it supports",
  ignore: !cases || !ourAdapt(),
  fn: async () => {
    await roundTrip("gatehousefile", ourAdapt()!, cases!, KNOWN_GAPS);
  },
});
