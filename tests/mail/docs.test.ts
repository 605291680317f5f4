/**
 * docs/mail.md against the code: the client tables list exactly the clients' methods, each with
 * an example that calls it; the item lifecycle diagram (Mermaid) has exactly the states and
 * transitions of `lib/mail/lifecycle.ts`; and the TypeScript blocks and the tables' examples
 * type-check against the package's own entry point (`deno check`, the tests' import map).
 */
import assert from "node:assert/strict";
import { MailClient, MailroomClient } from "../../mail.ts";
import {
  allowedStates,
  cancelTransition,
  completedStatus,
  isFinal,
  ITEM_ACTIONS,
  ITEM_STATUSES,
  type ItemStatus,
  pendingAction,
  requestTransition,
} from "../../lib/mail/lifecycle.ts";

const DOC = new URL("../../docs/mail.md", import.meta.url);
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** The text between a heading and the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${heading} is in docs/mail.md`);
  const level = heading.match(/^#+/)![0].length;
  const rest = text.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  return next < 0 ? rest : rest.slice(0, next);
}

interface Row {
  method: string;
  example: string;
}

/** The rows of the method table that follows `marker` (method name from the first column). */
function methodTable(text: string, marker: string): Row[] {
  const start = text.indexOf(marker);
  assert.ok(start >= 0, marker);
  const lines = text.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("| method"));
  const rows: Row[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim().replaceAll("\\|", "|"));
    const method = cells[0].match(/^`([A-Za-z]+)[<(]/)?.[1];
    assert.ok(method, `a method in ${cells[0]}`);
    const example = cells.at(-1)!.match(/^`(.*)`$/)?.[1] ?? "";
    rows.push({ method, example });
  }
  return rows;
}

const methodsOf = (c: { prototype: object }) =>
  Object.getOwnPropertyNames(c.prototype).filter((m) => m !== "constructor").sort();

Deno.test("docs/mail.md: the client tables list exactly the clients' methods, each with an example calling it", async () => {
  const text = await Deno.readTextFile(DOC);
  const client = methodTable(text, "`new MailClient({");
  const mailroom = methodTable(text, "`new MailroomClient({");
  for (
    const [name, rows, cls, receiver] of [
      ["MailClient", client, MailClient, "client"],
      ["MailroomClient", mailroom, MailroomClient, "ops"],
    ] as const
  ) {
    assert.deepEqual(rows.map((r) => r.method).sort(), methodsOf(cls), `${name}'s table`);
    for (const r of rows) {
      assert.ok(
        r.example.includes(`${receiver}.${r.method}(`),
        `${name}.${r.method}: the example calls it (${r.example || "none"})`,
      );
    }
  }
});

/** `from --> to: label` lines of the Mermaid state diagram under "## Item lifecycle". */
function diagram(text: string): { states: Set<string>; edges: Map<string, string> } {
  const body = section(text, "## Item lifecycle").match(/```mermaid\n([\s\S]*?)```/)?.[1] ?? "";
  assert.ok(body.includes("stateDiagram-v2"), "a Mermaid state diagram");
  const states = new Set<string>();
  const edges = new Map<string, string>();
  for (const line of body.split("\n")) {
    const m = line.trim().match(/^(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)(?:\s*:\s*(.*))?$/);
    if (!m) continue;
    for (const s of [m[1], m[2]]) if (s !== "[*]") states.add(s);
    const key = `${m[1]} --> ${m[2]}`;
    assert.ok(!edges.has(key), `${key} is drawn once`);
    edges.set(key, m[3] ?? "");
  }
  return { states, edges };
}

/** The transitions of lib/mail/lifecycle.ts, with the words each one's label must have. */
function lifecycle(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (from: string, to: string, words: string[]) => {
    const key = `${from} --> ${to}`;
    out.set(key, [...(out.get(key) ?? []), ...words]);
  };
  add("[*]", "received", ["receives"]);
  for (const status of ITEM_STATUSES) {
    if (isFinal(status)) add(status, "[*]", []);
    for (const action of ITEM_ACTIONS) {
      const t = requestTransition({ status, statusBefore: null, lastCancelled: null }, action);
      if (t.kind === "change") add(status, t.to, [action]);
    }
    const action = pendingAction(status);
    if (!action) continue;
    add(status, completedStatus(status)!, ["complete"]);
    for (const before of allowedStates(action, false)) {
      const t = cancelTransition(
        { status, statusBefore: before as ItemStatus, lastCancelled: null },
        action,
      );
      assert.equal(t.kind, "change");
      if (t.kind === "change") add(status, t.to, [`cancel ${action}`, "fail"]);
    }
  }
  return out;
}

Deno.test("docs/mail.md: the lifecycle diagram has exactly the states and transitions of lifecycle.ts", async () => {
  const { states, edges } = diagram(await Deno.readTextFile(DOC));
  assert.deepEqual([...states].sort(), [...ITEM_STATUSES].sort());
  const expected = lifecycle();
  assert.deepEqual([...edges.keys()].sort(), [...expected.keys()].sort());
  for (const [edge, words] of expected) {
    for (const word of words) {
      assert.ok(edges.get(edge)!.includes(word), `${edge}: "${edges.get(edge)}" names ${word}`);
    }
  }
});

Deno.test("docs/mail.md: the lifecycle check fails on a diagram that differs", () => {
  const expected = lifecycle();
  const drawn = (lines: string[]) =>
    diagram(`\n## Item lifecycle\n\n\`\`\`mermaid\nstateDiagram-v2\n${lines.join("\n")}\n\`\`\`\n`);
  const all = [...expected].map(([edge, words]) => `${edge}: ${words.join(" / ")}`);
  const { edges } = drawn(all);
  assert.deepEqual([...edges.keys()].sort(), [...expected.keys()].sort());
  // one transition missing, one too many
  const fewer = drawn(all.filter((l) => !l.startsWith("opened --> rescan_requested"))).edges;
  assert.notDeepEqual([...fewer.keys()].sort(), [...expected.keys()].sort());
  const more = drawn([...all, "shredded --> received: undo"]).edges;
  assert.notDeepEqual([...more.keys()].sort(), [...expected.keys()].sort());
});

/** Declarations the tables' examples lean on (the rows continue one another). */
const CONTEXT = `import {
  type DeliveryLog,
  MailClient,
  type MailItem,
  MailroomClient,
} from "@gatehouse/gatehouse/mail";
declare const client: MailClient;
declare const ops: MailroomClient;
declare const account_id: string, user_id: string, address_id: string, key_id: string;
declare const webhook_id: string, mail_id: string, last: DeliveryLog, item: MailItem;
declare const png: Blob, pdf: Blob;
`;

Deno.test("docs/mail.md: its TypeScript blocks and the tables' examples type-check", async () => {
  const text = await Deno.readTextFile(DOC);
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-docs-" });
  try {
    const files: string[] = [];
    // the blocks of one section continue one another: one file per section
    const sections = text.split(/\n(?=## )/);
    for (const [i, part] of sections.entries()) {
      const blocks = [...part.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
      if (!blocks.length) continue;
      const file = `${dir}/section${i}.ts`;
      await Deno.writeTextFile(file, blocks.join("\n") + "\nexport {};\n");
      files.push(file);
    }
    assert.ok(files.length >= 2, "the code blocks were found");
    const examples = [
      ...methodTable(text, "`new MailClient({"),
      ...methodTable(text, "`new MailroomClient({"),
    ].map((r) => `{\n  ${r.example};\n}`);
    await Deno.writeTextFile(`${dir}/tables.ts`, CONTEXT + examples.join("\n") + "\n");
    files.push(`${dir}/tables.ts`);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", CONFIG, ...files],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
