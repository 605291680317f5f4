/** `deno task mail` as a real process: the printed curl command works as printed. */
import assert from "node:assert/strict";

Deno.test("standalone: prints a sandbox key and a curl command that works as printed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-mail-standalone-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "lib/mail/standalone.ts"],
    cwd: new URL("../../", import.meta.url).pathname,
    env: {
      PORT: "0",
      MAIL_DB: `file:${dir}/mail.db`,
      MAIL_BLOB_DIR: `${dir}/blobs`,
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let out = "";
    while (!/^curl .*$/m.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`standalone exited early:\n${out}`);
      out += value;
    }
    const curl = out.match(/^curl .*$/m)![0];
    assert.match(out, /sandbox API key:\s+gh_test_/);
    const run = await new Deno.Command("sh", { args: ["-c", curl], stdout: "piped" }).output();
    assert.equal(run.code, 0);
    const body = JSON.parse(new TextDecoder().decode(run.stdout));
    assert.equal(body.total, 3);
    assert.equal(body.data.length, 3);
    assert.equal(body.data[0].current_status, "received");
  } finally {
    child.kill("SIGTERM");
    await reader.cancel();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
