/**
 * The reference app as a real process (the command `deno task start` runs: `deno run -A
 * --config app/deno.json app/main.ts`) on a free loopback port with a temp database, and its
 * memory as the kernel reports it.
 */

export interface AppProcess {
  port: number;
  pid: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Resident set and its peak, in KiB (`/proc/<pid>/status`). */
  memory(): Promise<{ rss: number; peak: number }>;
  close(): Promise<void>;
}

const ROOT = new URL("../../", import.meta.url).pathname;

/** The arguments of `deno task start` after `deno` (read from deno.json). */
export const START: string[] = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks.start
  .split(/\s+/).slice(1);

/** What deno itself needs from the environment: PATH, HOME and its cache directory. */
function inherited(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Starts the app with `vars` added to a development environment; with `umask`, under that
 * umask (set by `sh` before it becomes the app).
 */
export async function startAppProcess(
  vars: Record<string, string> = {},
  options: { umask?: string } = {},
): Promise<AppProcess> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-proc-" });
  const app = [Deno.execPath(), ...START];
  const [command, ...args] = options.umask === undefined
    ? app
    : ["/bin/sh", "-c", `umask ${options.umask}; exec "$0" "$@"`, ...app];
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: {
      PORT: "0",
      DATABASE_URL: `file:${dir}/app.db`,
      MAIL_BLOB_DIR: `${dir}/blobs`,
      NO_COLOR: "1",
      ...inherited(),
      ...vars,
    },
    clearEnv: true, // nothing of the caller's environment (MODE, APP_URL ...) leaks in
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pump = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) out += text;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const close = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await pumps;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  let port = 0;
  for (let i = 0; i < 600 && !port; i++) {
    const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)\//);
    if (m) port = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 50));
  }
  if (!port) {
    await close();
    throw new Error(`the app did not start:\n${out}`);
  }
  return {
    port,
    pid: child.pid,
    output: () => out,
    async memory() {
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const kib = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+) kB`))![1]);
      return { rss: kib("VmRSS"), peak: kib("VmHWM") };
    },
    close,
  };
}
