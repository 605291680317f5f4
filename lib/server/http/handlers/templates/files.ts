/**
 * The file root the template functions read (Go's `http.Dir`): a name is cleaned as an
 * absolute path (`path.Clean("/" + name)`) and joined to the root, so `..` never leaves it;
 * symbolic links are followed, as Go's `os.Open` follows them. Errors read as Go's
 * (`open <path>: no such file or directory`).
 *
 * @module
 */
import { FuncError, GoFunc, GoInt, GoObject, NO_FIELD } from "./gotemplate/mod.ts";
import { GoTime } from "./time.ts";
import { goClean } from "../../../net/path.ts";

/** Go's `path.Clean`. */
export const cleanPath: (p: string) => string = goClean;

/** The path a name opens under `root`. */
export function resolve(root: string, name: string): string {
  const rel = cleanPath("/" + name);
  const base = root === "" ? "." : root;
  return cleanPath(base + rel);
}

function goError(op: string, path: string, e: unknown): FuncError {
  let why = e instanceof Error ? e.message : String(e);
  if (e instanceof Deno.errors.NotFound) why = "no such file or directory";
  else if (e instanceof Deno.errors.PermissionDenied) why = "permission denied";
  else if (e instanceof Deno.errors.IsADirectory) why = "is a directory";
  else if (e instanceof Deno.errors.NotADirectory) why = "not a directory";
  return new FuncError(`${op} ${path}: ${why}`, e);
}

/** The most bytes one file function reads (a larger file is refused). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Reads a file under the root as text. */
export async function readRootFile(root: string, name: string): Promise<string> {
  const path = resolve(root, name);
  let bytes: Uint8Array;
  try {
    const st = await Deno.stat(path);
    if (st.isDirectory) {
      throw new FuncError(`read ${path}: is a directory`);
    }
    if (st.size > MAX_FILE_BYTES) {
      throw new FuncError(`read ${path}: file larger than ${MAX_FILE_BYTES} bytes`);
    }
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof FuncError) throw e;
    throw goError("open", path, e);
  }
  return new TextDecoder().decode(bytes);
}

/** `fs.FileInfo` of a stat. */
export class GoFileInfo extends GoObject {
  readonly goType = "*os.fileStat";
  constructor(readonly name: string, readonly info: Deno.FileInfo) {
    super();
  }
  override method(name: string): GoFunc | undefined {
    const i = this.info;
    const f = (impl: () => unknown) => new GoFunc(name, [], null, impl, false);
    switch (name) {
      case "Name":
        return f(() => this.name);
      case "Size":
        return f(() => new GoInt("int64", BigInt(i.size)));
      case "IsDir":
        return f(() => i.isDirectory);
      case "ModTime":
        return f(() => new GoTime(i.mtime ?? new Date(0)));
      case "Mode":
        return f(() => new GoFileMode(i));
    }
    return undefined;
  }
  override field(_name: string): unknown {
    return NO_FIELD;
  }
  override format(): string {
    return `&{${this.name} ${this.info.size} ${new GoFileMode(this.info).format()} ${
      new GoTime(this.info.mtime ?? new Date(0)).format()
    }}`;
  }
}

/** `fs.FileMode`, printed as Go prints it (`-rw-r--r--`, `drwxr-xr-x`). */
class GoFileMode extends GoObject {
  readonly goType = "fs.FileMode";
  constructor(readonly info: Deno.FileInfo) {
    super();
  }
  override format(): string {
    const m = this.info.mode ?? 0;
    let s = this.info.isDirectory ? "d" : this.info.isSymlink ? "L" : "-";
    const rwx = "rwxrwxrwx";
    for (let i = 0; i < 9; i++) s += m & (1 << (8 - i)) ? rwx[i] : "-";
    return s;
  }
  override method(name: string): GoFunc | undefined {
    const f = (impl: () => unknown) => new GoFunc(name, [], null, impl, false);
    if (name === "IsDir") return f(() => this.info.isDirectory);
    if (name === "IsRegular") return f(() => this.info.isFile);
    if (name === "String") return f(() => this.format());
    if (name === "Perm") return f(() => new GoInt("uint", BigInt((this.info.mode ?? 0) & 0o777)));
    return undefined;
  }
}

/** Stats a file under the root. */
export async function statRootFile(root: string, name: string): Promise<GoFileInfo> {
  const path = resolve(root, cleanPath(name));
  try {
    const info = await Deno.stat(path);
    return new GoFileInfo(path.slice(path.lastIndexOf("/") + 1) || "/", info);
  } catch (e) {
    throw goError("open", path, e);
  }
}

/** Lists a directory under the root, in the order the file system gives. */
export async function listRootDir(root: string, name: string): Promise<string[]> {
  const path = resolve(root, cleanPath(name));
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw goError("open", path, e);
  }
  if (!info.isDirectory) throw new FuncError(`${name} is not a directory`);
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) names.push(e.name);
  } catch (e) {
    throw goError("readdirent", path, e);
  }
  return names;
}

/** True when a name under the root can be opened. */
export async function rootFileExists(root: string, name: string): Promise<boolean> {
  try {
    await Deno.stat(resolve(root, name));
    return true;
  } catch {
    return false;
  }
}
