/**
 * README's web server quick start, its shell lines extracted from the file and run as pasted
 * (`_readme_shell.ts`: bash, in a copy of the clone, each answer checked), with no edit: the
 * lines take fixed ports (8080, 8443, the admin API's 2019), so they run in namespaces of their
 * own (`unshare`: a user, network and process namespace, whose loopback interface no other test
 * sees, and whose processes all end with it). `gatehouse trust` is the one line not run: it
 * changes this machine's trust stores (`tests/server/pki/trust.test.ts` tests it, undoing it).
 * Where user namespaces are not allowed the test is ignored, by name, with a note.
 */
import assert from "node:assert/strict";
import { command, quickStartLines } from "./_readme_shell.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const README = await Deno.readTextFile(`${ROOT}README.md`);

/** Whether this machine lets a process make the namespaces the run needs, loopback up. */
const HAVE_NAMESPACES: boolean = (() => {
  try {
    const ok = new Deno.Command("unshare", {
      args: ["-r", "-n", "-p", "-f", "--kill-child", "ip", "link", "set", "lo", "up"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
    if (!ok) throw new Error("refused");
    return true;
  } catch {
    console.warn(
      "readme shell test ignored: unshare -r -n -p cannot make namespaces here (user " +
        "namespaces off, or util-linux/iproute2 missing)",
    );
    return false;
  }
})();

Deno.test("readme shell: the web server quick start's two sh blocks, line by line", () => {
  const blocks = quickStartLines(README);
  assert.equal(blocks.length, 2);
  assert.equal(blocks[0][0], "deno install");
  assert.ok(blocks[1].some((l) => command(l) === "deno run -A cli.ts run"), blocks[1].join("\n"));
  assert.equal(
    command('deno run -A cli.ts respond "Hello"   # a hard-coded server; prints its address'),
    'deno run -A cli.ts respond "Hello"',
  );
  assert.equal(command("curl localhost:2019/config/"), "curl localhost:2019/config/");
});

Deno.test({
  ignore: !HAVE_NAMESPACES,
  name: "readme shell: the web server quick start runs as pasted and answers as README says",
  async fn() {
    const out = await new Deno.Command("unshare", {
      args: [
        "-r",
        "-n",
        "-p",
        "-f",
        "--kill-child",
        "bash",
        "-c",
        'ip link set lo up && exec "$0" run -A --config tests/deno.json tests/e2e/_readme_shell.ts',
        Deno.execPath(),
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    const said = text.decode(out.stdout) + text.decode(out.stderr);
    assert.equal(out.code, 0, said);
    // every line of the two blocks ran and answered, but the trust line, said to be skipped
    const lines = quickStartLines(README).flat().filter((l) => !l.trim().startsWith("#"));
    for (const line of lines) {
      const trust = command(line) === "deno run -A cli.ts trust";
      assert.ok(said.includes(`${trust ? "skipped" : "ok"} ${line}`), `${line}\n${said}`);
    }
  },
});
