/**
 * A real php-fpm (Debian's php8.2-fpm) for the FastCGI tests: started with a temporary
 * config listening on a free loopback port (or a unix socket), a document root of PHP
 * scripts, and stopped afterwards.
 */
import { freePort } from "../http/harness.ts";

export const PHP_FPM = "/usr/sbin/php-fpm8.2";

/** True when php-fpm is installed here. */
export function phpFpmAvailable(): boolean {
  try {
    return Deno.statSync(PHP_FPM).isFile;
  } catch {
    return false;
  }
}

export interface PhpFpm {
  /** Dial address (`127.0.0.1:port` or `unix//path`). */
  dial: string;
  /** The document root holding the scripts. */
  root: string;
  /** Everything php-fpm logged (its error log). */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts php-fpm serving `files` (path relative to the root → content). */
export async function startPhpFpm(
  files: Record<string, string>,
  opts: { unix?: boolean; children?: number } = {},
): Promise<PhpFpm> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-fpm-" });
  const root = `${dir}/www`;
  for (const [name, body] of Object.entries(files)) {
    const path = `${root}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, body);
  }
  await Deno.mkdir(root, { recursive: true });
  const listen = opts.unix ? `${dir}/fpm.sock` : `127.0.0.1:${freePort()}`;
  const conf = `[global]
error_log = ${dir}/fpm.log
daemonize = no
pid = ${dir}/fpm.pid

[www]
listen = ${listen}
${opts.unix ? "listen.mode = 0666\n" : ""}pm = static
pm.max_children = ${opts.children ?? 2}
catch_workers_output = yes
decorate_workers_output = no
clear_env = yes

php_admin_flag[log_errors] = on
php_admin_value[display_errors] = off
php_admin_value[output_buffering] = 0
php_admin_value[upload_max_filesize] = 16M
php_admin_value[post_max_size] = 16M
`;
  await Deno.writeTextFile(`${dir}/fpm.conf`, conf);
  const child = new Deno.Command(PHP_FPM, {
    args: ["--nodaemonize", "--allow-to-run-as-root", "--fpm-config", `${dir}/fpm.conf`, "-n"],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeTo(new WritableStream()).catch(() => {});
  const dial = opts.unix ? `unix/${listen}` : listen;
  // ready when the socket accepts
  const until = Date.now() + 10_000;
  while (true) {
    try {
      const c = opts.unix
        ? await Deno.connect({ transport: "unix", path: listen })
        : await Deno.connect({ hostname: "127.0.0.1", port: Number(listen.split(":")[1]) });
      c.close();
      break;
    } catch {
      if (Date.now() > until) {
        child.kill("SIGKILL");
        await child.status;
        const log = await Deno.readTextFile(`${dir}/fpm.log`).catch(() => "");
        throw new Error(`php-fpm did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    dial,
    root,
    log: async () =>
      (await Deno.readTextFile(`${dir}/fpm.log`).catch(() => "")) +
      (await Deno.readTextFile(`${dir}/php.log`).catch(() => "")),
    async stop() {
      try {
        child.kill("SIGQUIT");
      } catch { /* gone */ }
      const t = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 3000);
      await child.status;
      clearTimeout(t);
      await stderr;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
