/**
 * Files only the process's user may open: directories 0700 and files 0600 whatever the umask,
 * for what keeps keys and secrets on disk outside the `file_system` storage — the `libsql`
 * storage's database file, the reference app's database and the mail blob store.
 *
 * A directory made here gets 0700 (each level it had to create, as Caddy's `file_system`
 * storage makes its directories 0700); a directory that was already there keeps its mode,
 * since it may be shared (`/tmp`, the working directory) — a caller may ask to hear of one that
 * group or others can read or write (the `libsql` storage warns). A file gets 0600 when made
 * and is set back to 0600 when found with other bits.
 *
 * A libSQL (SQLite) database on a file is more than that file: SQLite makes `-wal` and `-shm`
 * beside it when it first writes in WAL mode (and `-journal` in rollback mode), long after the
 * open. It gives each of them the mode of the database file itself, whatever the umask (the
 * unix VFS reads the database file's mode and sets it on the file it creates). So the
 * database file is made 0600 before libSQL opens it, and the side files that are already
 * there (from before) are set to 0600 too. A process-wide `umask` around the open would not
 * do: it is one setting for every thread and every file the process makes meanwhile (logs,
 * other stores), and the side files appear at the first write, not during the open.
 *
 * Node's `fs` is used, so the mail blob store keeps running on Node (the npm mirror).
 *
 * @module
 */
import { chmod, mkdir, open, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/** The mode of a private directory. */
export const PRIVATE_DIR_MODE = 0o700;
/** The mode of a private file. */
export const PRIVATE_FILE_MODE = 0o600;

/** The bits of a directory's mode that let group or others read or write it. */
export const SHARED_DIR_BITS = 0o066;

/** The side files SQLite keeps beside a database file. */
export const SQLITE_SIDE_FILES: readonly string[] = ["-wal", "-shm", "-journal"];

function missing(err: unknown): boolean {
  return (err as { code?: string }).code === "ENOENT";
}

/**
 * Makes `dir` and its missing parents, each 0700 whatever the umask; an existing directory
 * keeps its mode. True when `dir` was made here, false when it was there.
 *
 * @example
 * ```ts
 * import { makePrivateDir } from "./private_files.ts";
 * const base = await Deno.makeTempDir();
 * await makePrivateDir(`${base}/a/b`); // a and b are 0700
 * ```
 */
export async function makePrivateDir(dir: string): Promise<boolean> {
  const made: string[] = [];
  for (let d = dir; d !== dirname(d); d = dirname(d)) {
    try {
      await stat(d);
      break;
    } catch (err) {
      if (!missing(err)) throw err;
      made.push(d);
    }
  }
  if (made.length === 0) return false;
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir's mode is masked by the umask: set it on each level made here
  for (const d of made) await chmod(d, PRIVATE_DIR_MODE);
  return true;
}

/** Sets `path` to 0600 when it exists with another mode; false when there is no such file. */
async function tighten(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    if ((s.mode & 0o777) !== PRIVATE_FILE_MODE) await chmod(path, PRIVATE_FILE_MODE);
    return true;
  } catch (err) {
    if (missing(err)) return false;
    throw err;
  }
}

/** How a private file is prepared. */
export interface PrepareOptions {
  /**
   * Called when the file's directory was already there and group or others may read or write
   * it (a mode with {@linkcode SHARED_DIR_BITS}), with its absolute path and permission bits;
   * the directory keeps its mode.
   */
  onSharedDir?: (dir: string, mode: number) => void;
}

/**
 * Makes `path` an empty 0600 file when it does not exist, or sets an existing one to 0600; its
 * missing directories are made 0700 ({@linkcode makePrivateDir}).
 *
 * @example
 * ```ts
 * import { ensurePrivateFile } from "./private_files.ts";
 * const base = await Deno.makeTempDir();
 * await ensurePrivateFile(`${base}/db/store.db`); // db is 0700, store.db 0600
 * ```
 */
export async function ensurePrivateFile(
  path: string,
  options: PrepareOptions = {},
): Promise<void> {
  const dir = dirname(path);
  if (!(await makePrivateDir(dir)) && options.onSharedDir) {
    const mode = (await stat(dir)).mode & 0o777;
    if (mode & SHARED_DIR_BITS) options.onSharedDir(resolve(dir), mode);
  }
  if (await tighten(path)) return;
  try {
    const f = await open(path, "wx", PRIVATE_FILE_MODE);
    await f.close();
  } catch (err) {
    // made meanwhile by another process: tightened below all the same
    if ((err as { code?: string }).code !== "EEXIST") throw err;
  }
  await tighten(path);
}

/**
 * Writes a new file 0600 (its directory 0700, see {@linkcode makePrivateDir}).
 *
 * @example
 * ```ts
 * import { writePrivateFile } from "./private_files.ts";
 * const base = await Deno.makeTempDir();
 * await writePrivateFile(`${base}/scans/1.pdf`, new Uint8Array([37]));
 * ```
 */
export async function writePrivateFile(path: string, bytes: Uint8Array): Promise<void> {
  await makePrivateDir(dirname(path));
  const f = await open(path, "w", PRIVATE_FILE_MODE);
  try {
    await f.chmod(PRIVATE_FILE_MODE);
    await f.writeFile(bytes);
  } finally {
    await f.close();
  }
}

/**
 * The file path of a libSQL `file:` URL, as the client reads it (`file:relative/x.db`,
 * `file:///abs/x.db`; the query and fragment are not part of it), or null for other URLs
 * (`libsql://`, `https://`, `:memory:`).
 *
 * @example
 * ```ts
 * import { libsqlFilePath } from "./private_files.ts";
 * libsqlFilePath("file:.data/gatehouse.db"); // ".data/gatehouse.db"
 * libsqlFilePath("libsql://db.example.com"); // null
 * ```
 */
export function libsqlFilePath(url: string): string | null {
  const m = /^file:(?:\/\/[^/?#]*)?([^?#]*)/i.exec(url);
  if (!m || m[1] === "" || m[1] === ":memory:") return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/**
 * Before a libSQL client opens a `file:` URL: the database file made 0600 (its missing
 * directories 0700), or set to 0600 when it exists, and its side
 * files (`-wal`, `-shm`, `-journal`) that exist set to 0600. SQLite gives the side files it
 * makes later the database file's mode. Other URLs are left alone.
 *
 * @example
 * ```ts
 * import { preparePrivateLibsqlFile } from "./private_files.ts";
 * const base = await Deno.makeTempDir();
 * await preparePrivateLibsqlFile(`file:${base}/data/app.db`);
 * ```
 */
export async function preparePrivateLibsqlFile(
  url: string,
  options: PrepareOptions = {},
): Promise<void> {
  const path = libsqlFilePath(url);
  if (path === null) return;
  await ensurePrivateFile(path, options);
  await tightenLibsqlSideFiles(url);
}

/**
 * Sets the side files of a libSQL `file:` database that exist (`-wal`, `-shm`, `-journal`) to
 * 0600: run after the first write as a second line, in case the SQLite build did not copy the
 * database file's mode.
 */
export async function tightenLibsqlSideFiles(url: string): Promise<void> {
  const path = libsqlFilePath(url);
  if (path === null) return;
  for (const side of SQLITE_SIDE_FILES) await tighten(path + side);
}
