/**
 * The field audit: every field a standard module's decoder accepts is honoured or refused,
 * never accepted and ignored. The decoders declare what they accept (every `checkFields` call
 * is recorded while `_reach.ts`'s configs, which reach every decoder, are validated); the table
 * below names, for each field, the test that sets it and checks its effect (or its refusal).
 * The test fails when a decoder accepts a field the table does not have, when the table has a
 * field no decoder accepts, when a named test does not set the field, and when a registered
 * module is in neither the table nor the list of modules without fields. Modules with decoders
 * of their own (tls, pki, storage) are listed with their fields and must refuse unknown ones.
 */
import assert from "node:assert/strict";
import { recordAcceptedFields } from "../../../lib/server/config/decode.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { listModules } from "../../../lib/server/module/mod.ts";
import "../../../lib/server/standard.ts";
import { reachConfig, reachTlsConfig } from "./_reach.ts";
import { makePki } from "../http/pki.ts";
import { DECODED_AT, DECODERS, OWN_DECODERS, WITHOUT_FIELDS } from "./_audit_table.ts";

const TESTS = new URL("../", import.meta.url).pathname;

function normalise(where: string): string {
  return where
    .replace(/\[\d+\]/g, "[]")
    .replace(/^http\.servers\.[^.]+/, "http.servers.*")
    .replace(/\.replace\.[^.]+$/, ".replace.*")
    .replace(/named_routes\.[^.[]+/, "named_routes.*")
    .replace(/^logging\.logs\.[^.]+/, "logging.logs.*")
    .replace(/\.policies\[\]\.issuers\[\]/, ".policies[].issuers[]");
}

/** The inline module keys, which name a module rather than set it up. */
const INLINE_KEYS = new Set(["handler", "wrapper", "output", "format"]);

async function recorded(): Promise<Map<string, Set<string>>> {
  const seen = new Map<string, Set<string>>();
  recordAcceptedFields((where, allowed) => {
    const k = normalise(where);
    const s = seen.get(k) ?? new Set();
    for (const a of allowed) {
      if (!INLINE_KEYS.has(a) && !(a === "source" && k === "http.ip_sources.static")) s.add(a);
    }
    seen.set(k, s);
  });
  const pki = await makePki({ site: { dns: ["a.example"] } });
  try {
    await validateConfig(reachConfig());
    await validateConfig(reachTlsConfig(pki.leafs.site));
  } finally {
    recordAcceptedFields(null);
  }
  return seen;
}

const fileCache = new Map<string, string>();
function testText(ref: string): string {
  let t = fileCache.get(ref);
  if (t === undefined) {
    const path = TESTS + ref;
    if (ref.endsWith("/")) {
      t = "";
      for (const e of Deno.readDirSync(path)) {
        if (e.name.endsWith(".ts")) t += Deno.readTextFileSync(path + e.name);
      }
    } else t = Deno.readTextFileSync(path);
    fileCache.set(ref, t);
  }
  return t;
}

Deno.test("audit: every field a decoder accepts is in the table, and every table field is accepted", async () => {
  const seen = await recorded();
  const missing: string[] = [];
  const stale: string[] = [];
  for (const [where, fields] of seen) {
    const d = DECODERS[where];
    if (!d) {
      missing.push(`${where} (${[...fields].join(", ")})`);
      continue;
    }
    for (const f of fields) if (!d.fields.includes(f)) missing.push(`${where}.${f}`);
    for (const f of d.fields) if (!fields.has(f)) stale.push(`${where}.${f}`);
  }
  for (const where of Object.keys(DECODERS)) if (!seen.has(where)) stale.push(where);
  assert.deepEqual(missing, [], "accepted fields the audit table does not cover");
  assert.deepEqual(stale, [], "audit table entries no decoder accepts (or _reach.ts misses)");
});

Deno.test("audit: each field's test sets it (behaviour or refusal)", () => {
  const unshown: string[] = [];
  for (const [where, d] of Object.entries(DECODERS)) {
    for (const f of d.fields) {
      const ref = d.other?.[f] ?? d.test;
      if (!new RegExp(`\\b${f}\\b`).test(testText(ref))) unshown.push(`${where}.${f} (${ref})`);
    }
    for (const f of d.refused ?? []) {
      if (!d.fields.includes(f)) unshown.push(`${where}.${f}: refused but not a field`);
    }
  }
  assert.deepEqual(unshown, []);
});

Deno.test("audit: every registered module is audited", () => {
  const covered = new Set([
    ...Object.keys(DECODERS).map((w) => w.split(/[.[]/).slice(0, 4).join(".")),
    ...Object.keys(WITHOUT_FIELDS),
    ...Object.keys(OWN_DECODERS),
  ]);
  const decoderIds = new Set(Object.keys(DECODERS));
  const unaudited = listModules().filter((id) =>
    !decoderIds.has(id) && !WITHOUT_FIELDS[id] && !OWN_DECODERS[id] && !covered.has(id) &&
    !(DECODED_AT[id] && decoderIds.has(DECODED_AT[id]))
  );
  assert.deepEqual(unaudited, []);
});

Deno.test("audit: modules with their own decoders refuse unknown fields; their fields are tested", async () => {
  for (const [id, o] of Object.entries(OWN_DECODERS)) {
    await assert.rejects(
      validateConfig({ admin: { disabled: true }, ...(o.bogus as Record<string, unknown>) }),
      /bogus_field/,
      id,
    );
    for (const f of o.fields) {
      const ref = o.other?.[f] ?? o.test;
      assert.match(testText(ref), new RegExp(`\\b${f}\\b`), `${id}.${f} in ${ref}`);
    }
  }
});
