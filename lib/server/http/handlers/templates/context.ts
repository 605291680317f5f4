/**
 * The template context (Caddy's `TemplateContext`, `modules/caddyhttp/templates/tplcontext.go`):
 * the value templates run with as dot (`.Req`, `.OriginalReq`, `.Args`, `.RespHeader`,
 * `.Cookie`, `.RemoteIP`, `.ClientIP`, `.Host`), and Caddy's template functions (`include`,
 * `readFile`, `import`, `httpInclude`, `listFiles`, `fileExists`, `fileStat`, `env`,
 * `placeholder`/`ph`, `markdown`, `splitFrontMatter`, `stripHTML`, `humanize`, `httpError`,
 * `pathEscape`, `maybe`) over sprig's (sprig.ts). Like Caddy it runs text/template, not
 * html/template: nothing is escaped unless the template says so (`html`, `js`, `urlquery`).
 *
 * @module
 */
import type { RequestContext } from "../../context.ts";
import { HandlerError } from "../../errors.ts";
import { getterFor } from "../../replacer.ts";
import {
  FuncError,
  GoFunc,
  GoObject,
  NO_FIELD,
  pathEscape,
  Template,
  typeArray,
} from "./gotemplate/mod.ts";
import { sprintValue } from "./gotemplate/fmt.ts";
import { listRootDir, readRootFile, rootFileExists, statRootFile } from "./files.ts";
import { GoHeaders } from "./headers.ts";
import { splitFrontMatter } from "./frontmatter.ts";
import { humanize } from "./humanize.ts";
import { renderMarkdown } from "./markdown.ts";
import { GoRequest, hostWithoutPort, requestCookies } from "./request.ts";
import { SPRIG } from "./sprig.ts";

/** How deep `include` and `import` may nest (a file including itself stops here). */
export const MAX_INCLUDE_DEPTH = 32;

/** How deep `httpInclude` sub-requests may nest (Caddy's limit). */
export const MAX_HTTP_INCLUDE_DEPTH = 3;

/** The request header that counts `httpInclude` levels (Caddy's name). */
export const INCLUDE_HEADER = "Caddy-Templates-Include";

/** What one template run shares with the templates it includes. */
export interface RunEnv {
  /** The request. */
  c: RequestContext;
  /** The file root (placeholders replaced); "" when there is none. */
  root: string;
  /** The response header fields the template may change (`.RespHeader`). */
  respHeader: Headers;
  /** The action delimiters. */
  delims: [string, string];
  /** Sends a virtual request through the server (`httpInclude`); absent when it cannot. */
  subrequest?(uri: string, headers: Headers): Promise<{ status: number; body: string }>;
  /** Logs a warning (`maybe` of a function that is not there). */
  warn(msg: string, fields: Record<string, unknown>): void;
}

/** Go's `caddy.ToString`: strings as they are, others printed with `%v`. */
export function toGoString(v: unknown): string {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v === undefined || v === null) return "<nil>";
  return sprintValue(v);
}

/** Caddy's `funcStripHTML` (current Caddy: a depth counter, as PHP's `strip_tags`). */
export function stripHTML(s: string): string {
  let out = "";
  let depth = 0;
  let quote = "";
  for (const ch of s) {
    if (depth > 0 && quote === "" && (ch === '"' || ch === "'")) quote = ch;
    else if (depth > 0 && ch === quote) quote = "";
    else if (ch === "<" && quote === "") depth++;
    else if (ch === ">" && quote === "") {
      if (depth > 0) depth--;
      else out += ch;
    } else if (depth === 0) out += ch;
  }
  return out;
}

const NIL_FUNCS = typeArray([], "[]template.FuncMap");

/** The value a template runs with as dot. */
export class TemplateContext extends GoObject {
  readonly goType = "*templates.TemplateContext";
  /** `.Args`: what `include` passed. */
  args: unknown[] = typeArray([], "[]interface {}");
  /** The template being run (where `import` adds definitions). */
  tpl: Template | null = null;
  #req: GoRequest | null = null;

  constructor(readonly env: RunEnv, readonly depth = 0) {
    super();
  }

  override field(name: string): unknown {
    switch (name) {
      case "Req":
        return this.#req ??= new GoRequest(this.env.c, false);
      case "Args":
        return this.args;
      case "RespHeader":
        return new GoHeaders(this.env.respHeader);
      case "Root":
        return this.env.root;
      case "CustomFuncs":
        return NIL_FUNCS;
    }
    return NO_FIELD;
  }

  override method(name: string): GoFunc | undefined {
    const c = this.env.c;
    switch (name) {
      case "Cookie":
        return new GoFunc(name, ["string"], null, (n) => {
          return requestCookies(c.headers).find(([k]) => k === n)?.[1] ?? "";
        }, false);
      case "RemoteIP":
        return new GoFunc(name, [], null, () => c.remoteHost, false);
      case "ClientIP":
        return new GoFunc(name, [], null, () => c.clientIP, false);
      case "Host":
        return new GoFunc(name, [], null, () => hostWithoutPort(c.host));
      case "OriginalReq":
        return new GoFunc(name, [], null, () => new GoRequest(c, true), false);
    }
    return undefined;
  }

  override format(): string {
    return `{${this.env.root} ${new GoRequest(this.env.c, false).format()} ${
      sprintValue(this.args)
    } map[] []}`;
  }

  /** A new template set bound to this context (Caddy's `NewTemplate`). */
  newTemplate(name: string): Template {
    this.tpl = new Template(name, { delims: this.env.delims, funcs: [SPRIG, this.#funcs()] });
    return this.tpl;
  }

  /** Parses and runs `text` as template `name` with this context as dot. */
  async execute(name: string, text: string): Promise<string> {
    return await this.newTemplate(name).parse(text).execute(this);
  }

  #child(): TemplateContext {
    if (this.depth >= MAX_INCLUDE_DEPTH) {
      throw new FuncError(`include nested too deeply (more than ${MAX_INCLUDE_DEPTH} levels)`);
    }
    return new TemplateContext(this.env, this.depth + 1);
  }

  #read(name: string): Promise<string> {
    if (this.env.root === "") throw new FuncError("root file system not specified");
    return readRootFile(this.env.root, name);
  }

  #funcs(): Map<string, GoFunc> {
    const env = this.env;
    const root = () => {
      if (env.root === "") throw new FuncError("root file system not specified");
      return env.root;
    };
    const f = (
      name: string,
      params: GoFunc["params"],
      variadic: GoFunc["variadic"],
      impl: GoFunc["impl"],
    ) => [name, new GoFunc(name, params, variadic, impl)] as const;
    return new Map([
      f("include", ["string"], "any", async (file, ...args) => {
        const body = await this.#read(file as string);
        const child = this.#child();
        child.args = typeArray(args, "[]interface {}");
        return await child.execute(file as string, body);
      }),
      f("readFile", ["string"], null, (file) => this.#read(file as string)),
      f("import", ["string"], null, async (file) => {
        const body = await this.#read(file as string);
        if (this.depth >= MAX_INCLUDE_DEPTH) this.#child();
        this.tpl!.parse(body);
        return "";
      }),
      f("httpInclude", ["string"], null, (uri) => this.#httpInclude(uri as string)),
      f("stripHTML", ["string"], null, (s) => stripHTML(s as string)),
      f("markdown", ["any"], null, (s) => renderMarkdown(toGoString(s))),
      f("splitFrontMatter", ["any"], null, (s) => splitFrontMatter(toGoString(s))),
      f(
        "listFiles",
        ["string"],
        null,
        async (n) => typeArray(await listRootDir(root(), n as string), "[]string"),
      ),
      f("fileStat", ["string"], null, (n) => statRootFile(root(), n as string)),
      f("env", ["string"], null, (n) => {
        try {
          return Deno.env.get(n as string) ?? "";
        } catch {
          return "";
        }
      }),
      f("placeholder", ["string"], null, (n) => this.#placeholder(n as string)),
      f("ph", ["string"], null, (n) => this.#placeholder(n as string)),
      f("fileExists", ["string"], null, (n) => rootFileExists(root(), n as string)),
      f("httpError", ["int"], null, (code) => {
        for (
          const h of ["content-length", "content-type", "etag", "last-modified", "accept-ranges"]
        ) {
          env.respHeader.delete(h);
        }
        const status = Number(code);
        throw new FuncError(`${status}`, new HandlerError(status, "", "templates"));
      }),
      f("humanize", ["string", "string"], null, (t, d) => humanize(t as string, d as string)),
      f("maybe", ["string"], "any", (n) => {
        env.warn("template function could not be found; ignoring invocation", { name: n });
        return "";
      }),
      f("pathEscape", ["string"], null, (s) => pathEscape(s as string)),
    ]);
  }

  #placeholder(name: string): string {
    // file placeholders are not offered to templates, as Caddy's WithoutFile
    if (name.startsWith("file.")) return "";
    return getterFor(name)(this.env.c) ?? "";
  }

  async #httpInclude(uri: string): Promise<string> {
    const c = this.env.c;
    let count = 1;
    const sent = c.headers.get(INCLUDE_HEADER);
    if (sent !== null && sent !== "") {
      const n = Number(sent);
      if (!/^[+-]?\d+$/.test(sent)) {
        throw new FuncError(
          `parsing ${INCLUDE_HEADER}: strconv.Atoi: parsing ${
            JSON.stringify(sent)
          }: invalid syntax`,
        );
      }
      if (n >= MAX_HTTP_INCLUDE_DEPTH) throw new FuncError("virtual request cycle");
      count = n + 1;
    }
    if (!this.env.subrequest) throw new FuncError("virtual requests are not available here");
    const headers = new Headers(c.headers);
    headers.set("accept-encoding", "identity");
    headers.set(INCLUDE_HEADER, String(count));
    const res = await this.env.subrequest(uri, headers);
    if (res.status >= 400) throw new FuncError(`http ${res.status}`);
    const child = new TemplateContext(this.env, this.depth);
    return await child.execute(uri, res.body);
  }
}
