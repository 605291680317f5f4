/** Commands generated from the declarations: help, completion, manpage; and the small ones. */
import assert from "node:assert/strict";
import { commands } from "../../lib/cli/registry.ts";
import { renderCompletion } from "../../lib/cli/completion.ts";
import { renderManpage } from "../../lib/cli/manpage.ts";
import { renderHelp } from "../../lib/cli/help.ts";
import { runCli, tempEnv } from "./fixtures/helpers.ts";

Deno.test("help, completion and man pages are generated from every declared command and flag", () => {
  const run = commands.find((c) => c.name === "run")!;
  const help = renderHelp(run);
  for (const f of run.flags) assert.ok(help.includes(`--${f.name}`), f.name);
  for (const shell of ["bash", "zsh", "fish", "powershell"]) {
    const script = renderCompletion(shell, commands);
    for (const c of commands.filter((c) => !c.name.includes(" "))) {
      assert.ok(script.includes(c.name), `${shell} ${c.name}`);
    }
    assert.ok(script.includes("--resume") || script.includes("-l resume"), shell);
  }
  assert.throws(() => renderCompletion("tcsh", commands), /unsupported shell/);
  const page = renderManpage(run, commands);
  assert.match(page, /^\.TH "GATEHOUSE-RUN" "8"/);
  assert.ok(page.includes("\\-\\-pidfile"));
});

Deno.test("the command line: help, version, list-modules, build-info, completion, manpage, errors", async () => {
  const t = await tempEnv();
  try {
    const help = await runCli(["help"], t.env);
    assert.equal(help.code, 0);
    for (const name of ["run", "start", "stop", "reload", "validate", "adapt", "environ"]) {
      assert.match(help.stdout, new RegExp(`\\n  ${name} `));
    }
    assert.equal((await runCli(["help", "reload"], t.env)).stdout.includes("--force"), true);
    assert.match((await runCli(["version"], t.env)).stdout, /^gatehouse v\d+\.\d+\.\d+/);
    const mods = await runCli(["list-modules"], t.env);
    for (
      const id of [
        "http",
        "http.handlers.static_response",
        "caddy.logging.writers.file",
        "caddy.storage.file_system",
      ]
    ) {
      assert.ok(mods.stdout.split("\n").includes(id), id);
    }
    assert.match((await runCli(["list-modules", "--versions"], t.env)).stdout, /^http v\d/m);
    assert.match((await runCli(["build-info"], t.env)).stdout, /runtime\tdeno\t/);
    assert.match((await runCli(["completion", "fish"], t.env)).stdout, /complete -c gatehouse/);
    assert.equal((await runCli(["manpage", "-o", `${t.dir}/man`], t.env)).code, 0);
    assert.ok(Deno.statSync(`${t.dir}/man/gatehouse-run.8`).isFile);
    assert.equal((await runCli(["manpage"], t.env)).code, 1);
    assert.equal((await runCli(["no-such-command"], t.env)).code, 1);
    assert.equal((await runCli(["run", "--no-such-flag"], t.env)).code, 1);
    assert.equal((await runCli(["start", "-c", "-"], t.env)).code, 1);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("every command takes --help and -h: its own help on stdout, exit 0, nothing run", async () => {
  const t = await tempEnv();
  try {
    const names = commands.map((c) => c.name);
    const jobs = names.flatMap((name) => [[name, "--help"], [name, "-h"]]);
    for (let i = 0; i < jobs.length; i += 4) {
      await Promise.all(
        jobs.slice(i, i + 4).map(async ([name, flag]) => {
          // `run --help` and the quick servers would block if the command ran
          const r = await runCli([...name.split(" "), flag], t.env);
          assert.equal(r.code, 0, `${name} ${flag}: ${r.out}`);
          assert.ok(
            r.stdout.startsWith(`Usage:\n  gatehouse ${name}`),
            `${name} ${flag}: ${r.stdout}`,
          );
          assert.match(r.stdout, /-h, --help +Show this help/, `${name} ${flag}`);
        }),
      );
    }
    const top = await runCli(["--help"], t.env);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /Usage:\n {2}gatehouse <command>/);
    // an unknown flag still fails, before any help
    const bad = await runCli(["run", "--bogus"], t.env);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /Unknown option '--bogus'/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("a command group answers with its subcommands: bare, --help and help <group>", async () => {
  const t = await tempEnv();
  try {
    // every first word shared by subcommands: `storage` (no command of its own), `file-server`
    const parents = [
      ...new Set(commands.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0])),
    ];
    assert.ok(parents.includes("storage") && parents.includes("file-server"), parents.join());
    const jobs = parents.flatMap((p) => [[p, "--help"], [p, "-h"], ["help", p]]);
    jobs.push(["storage"]);
    await Promise.all(jobs.map(async (argv) => {
      const parent = argv[0] === "help" ? argv[1] : argv[0];
      const r = await runCli(argv, t.env);
      const shown = argv.join(" ");
      assert.equal(r.code, 0, `${shown}: ${r.out}`);
      assert.ok(r.stdout.startsWith(`Usage:\n  gatehouse ${parent}`), `${shown}: ${r.stdout}`);
      assert.match(r.stdout, /\nSubcommands:\n/, shown);
      for (const sub of commands.filter((c) => c.name.startsWith(`${parent} `))) {
        const word = sub.name.slice(parent.length + 1);
        assert.match(
          r.stdout,
          new RegExp(`\\n  ${word} +${sub.short.replace(/[()]/g, "\\$&")}\\n`),
        );
      }
    }));
    const bad = await runCli(["storage", "bogus"], t.env);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /storage: unknown subcommand "bogus" \(one of: export, import\)/);
    assert.equal((await runCli(["help", "no-such-group"], t.env)).code, 1);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
