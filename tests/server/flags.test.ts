/**
 * The command line's flag parser against `node:util` `parseArgs` (strict mode), whose grammar it
 * keeps: the same values and arguments for accepted command lines, and the same refusals.
 */
import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import fc from "fast-check";
import { type Command, commandFlags } from "../../lib/cli/command.ts";
import { parseFlags, UsageError } from "../../lib/cli/main.ts";

const command: Command = {
  name: "demo",
  usage: "",
  short: "",
  flags: [
    { name: "config", short: "c", type: "string", help: "" },
    { name: "adapter", short: "a", type: "string", help: "", default: "json" },
    { name: "watch", short: "w", type: "boolean", help: "" },
    { name: "verbose", short: "v", type: "boolean", help: "" },
    { name: "header", short: "H", type: "string", multiple: true, help: "" },
  ],
  run: () => Promise.resolve(0),
};

type Parsed = { flags: Record<string, unknown>; args: string[]; help: boolean };

function viaNode(argv: string[]): Parsed | "error" {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean }
  > = {};
  for (const f of commandFlags(command)) {
    options[f.name] = { type: f.type, ...(f.short ? { short: f.short } : {}) };
    if (f.multiple) options[f.name].multiple = true;
  }
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options,
      allowPositionals: true,
      strict: true,
    });
    const flags: Record<string, unknown> = {};
    for (const f of command.flags) {
      flags[f.name] = (values as Record<string, unknown>)[f.name] ?? f.default;
    }
    return { flags, args: positionals, help: values.help === true };
  } catch {
    return "error";
  }
}

function viaOurs(argv: string[]): Parsed | "error" {
  try {
    return parseFlags(command, argv);
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    assert.match(e.message, /^demo: /);
    return "error";
  }
}

Deno.test("flags: worked examples", () => {
  assert.deepEqual(viaOurs(["-c", "a.json", "--watch", "x"]), {
    flags: {
      config: "a.json",
      adapter: "json",
      watch: true,
      verbose: undefined,
      header: undefined,
    },
    args: ["x"],
    help: false,
  });
  assert.deepEqual(viaOurs(["--config=b", "-vw", "-H", "A: 1", "-HB: 2", "--", "--watch"]), {
    flags: { config: "b", adapter: "json", watch: true, verbose: true, header: ["A: 1", "B: 2"] },
    args: ["--watch"],
    help: false,
  });
  assert.deepEqual(viaOurs(["-", "-cfile"]), {
    flags: {
      config: "file",
      adapter: "json",
      watch: undefined,
      verbose: undefined,
      header: undefined,
    },
    args: ["-"],
    help: false,
  });
  assert.equal((viaOurs(["-c", "x", "--help"]) as Parsed).help, true);
  assert.equal((viaOurs(["-vh"]) as Parsed).help, true);
  assert.throws(() => parseFlags(command, ["--nope"]), /demo: Unknown option '--nope'/);
  assert.throws(() => parseFlags(command, ["-x"]), /demo: Unknown option '-x'/);
  assert.throws(() => parseFlags(command, ["--watch=1"]), /does not take an argument/);
  assert.throws(() => parseFlags(command, ["--config"]), /argument missing/);
  assert.throws(() => parseFlags(command, ["-c", "--watch"]), /ambiguous/);
  assert.throws(() => parseFlags(command, ["-w-"]), /demo: Unknown option/);
});

/** True when a string-valued short flag in the group takes the rest, "-" included ("-c-x"). */
function shortValueBefore(group: string): boolean {
  const strings = new Set(command.flags.filter((f) => f.type === "string").map((f) => f.short));
  for (const ch of group.slice(1)) {
    if (ch === "-") return false;
    if (strings.has(ch)) return true;
  }
  return false;
}

Deno.test("flags: same outcome as node:util parseArgs on random command lines", () => {
  const token = fc.oneof(
    fc.constantFrom(
      "--config",
      "--config=x",
      "--adapter",
      "-a",
      "-c",
      "-cv",
      "-vc",
      "-vw",
      "-wv",
      "--watch",
      "--watch=",
      "--verbose",
      "-H",
      "-Hx",
      "--header",
      "--header=k: v",
      "--",
      "-",
      "--nope",
      "-z",
      "-vz",
      "value",
      "other.json",
      "-c=1",
      "--help",
      "-h",
      "-vh",
    ),
    fc.string({ maxLength: 6 }),
  );
  fc.assert(
    fc.property(fc.array(token, { maxLength: 8 }), (argv) => {
      // One deliberate difference: node reads a "-" inside a short group ("-w-x") as "--" and
      // everything after it as arguments; here it is refused, as Go's pflag does.
      const dashInGroup = argv.findIndex((a) => /^-[^-]/.test(a) && a.slice(2).includes("-"));
      const dashIsOption = dashInGroup >= 0 && !argv.slice(0, dashInGroup).includes("--") &&
        !shortValueBefore(argv[dashInGroup]);
      if (dashIsOption) assert.equal(viaOurs(argv), "error", JSON.stringify(argv));
      else assert.deepEqual(viaOurs(argv), viaNode(argv), JSON.stringify(argv));
    }),
    { numRuns: 3000 },
  );
});
