/**
 * `markdown`: CommonMark with GitHub's extensions, rendered as Caddy's Goldmark setup renders
 * it (GFM tables, strikethrough as `<del>`, task lists, autolinks of URLs, `www.` names and
 * e-mail addresses; footnotes; heading ids made from the heading's text; raw HTML kept).
 * Built on markdown-it (a CommonMark-compliant parser; its tables and hard breaks already
 * print as Goldmark's) with markdown-it-footnote, both loaded the first time a template
 * renders Markdown. Fenced code in a language Chroma knows is wrapped as Chroma wraps it
 * (`<pre tabindex="0" class="chroma"><code><span class="line"><span class="cl">`), without
 * Chroma's token classes: there is no syntax highlighter here.
 *
 * @module
 */
/** What of markdown-it's tokens the rules here read and change. */
type Token = {
  type: string;
  tag: string;
  content: string;
  info: string;
  markup: string;
  // deno-lint-ignore no-explicit-any
  meta: any;
  children: Token[] | null;
  attrSet(name: string, value: string): void;
  attrGet(name: string): string | null;
};

/** Languages Chroma has a lexer for (names and aliases), whose blocks Goldmark highlights. */
const CHROMA = new Set(
  ("bash sh shell zsh c cpp c++ cs csharp css diff patch docker dockerfile go golang html xml " +
    "java javascript js jsx json yaml yml toml ini python py python3 ruby rb rust rs sql php " +
    "typescript ts tsx markdown md nginx makefile make lua perl kotlin swift scala haskell hs " +
    "elixir erlang r powershell ps1 vim tex latex graphql protobuf proto terraform hcl " +
    "caddyfile caddy nix ocaml clojure dart groovy vue svelte scss sass less plaintext text txt")
    .split(" "),
);

function escapeGo(s: string): string {
  return s.replace(
    /[<>&'"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;" })[c]!,
  );
}

/** Goldmark's heading id: ASCII letters and digits lower-cased, spaces, `-` and `_` as `-`. */
function headingId(text: string, seen: Set<string>): string {
  let id = "";
  for (const ch of text.trim()) {
    if (ch.length !== 1 || ch.charCodeAt(0) > 0x7f) continue;
    if (/[A-Za-z0-9]/.test(ch)) id += ch.toLowerCase();
    else if (/[\s\-_]/.test(ch)) id += "-";
  }
  if (id === "") id = "heading";
  if (!seen.has(id)) {
    seen.add(id);
    return id;
  }
  for (let i = 1;; i++) {
    const next = `${id}-${i}`;
    if (!seen.has(next)) {
      seen.add(next);
      return next;
    }
  }
}

function inlineText(t: Token): string {
  return (t.children ?? []).map((c) =>
    c.type === "text" || c.type === "code_inline" ? c.content : c.children ? inlineText(c) : ""
  ).join("");
}

/** A renderer, once loaded. */
interface Renderer {
  render(text: string): string;
}

let md: Promise<Renderer> | null = null;

async function load(): Promise<Renderer> {
  const [{ default: MarkdownItCtor }, { default: footnote }] = await Promise.all([
    import("markdown-it"),
    import("markdown-it-footnote"),
  ]);
  const m = new MarkdownItCtor({ html: true, linkify: true }).use(footnote);
  m.linkify.set({ fuzzyLink: true, fuzzyEmail: true });
  type Rule = (tokens: Token[], idx: number, ...rest: unknown[]) => string;
  const r = m.renderer.rules as unknown as Record<string, Rule>;
  r.s_open = () => "<del>";
  r.s_close = () => "</del>";
  r.footnote_ref = (tokens: Token[], idx: number) => {
    const n = tokens[idx].meta!.id + 1;
    return `<sup id="fnref:${n}"><a href="#fn:${n}" class="footnote-ref" role="doc-noteref">${n}</a></sup>`;
  };
  r.footnote_block_open = () => '<div class="footnotes" role="doc-endnotes">\n<hr>\n<ol>\n';
  r.footnote_block_close = () => "</ol>\n</div>\n";
  r.footnote_open = (tokens: Token[], idx: number) => `<li id="fn:${tokens[idx].meta!.id + 1}">\n`;
  r.footnote_close = () => "</li>\n";
  r.footnote_anchor = (tokens: Token[], idx: number) =>
    `&#160;<a href="#fnref:${
      tokens[idx].meta!.id + 1
    }" class="footnote-backref" role="doc-backlink">&#x21a9;&#xfe0e;</a>`;
  const fence = r.fence;
  r.fence = (tokens: Token[], idx: number, ...rest: unknown[]) => {
    const t = tokens[idx];
    const lang = t.info.trim().split(/\s+/)[0].toLowerCase();
    if (!CHROMA.has(lang)) return fence(tokens, idx, ...rest);

    const lines = t.content.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const body = lines.map((l) =>
      `<span class="line"><span class="cl">${escapeGo(l)}\n</span></span>`
    );
    return `<pre tabindex="0" class="chroma"><code>${body.join("")}</code></pre>`;
  };
  const ruler = m.core.ruler as unknown as {
    push(name: string, rule: (state: { tokens: Token[] }) => void): void;
  };
  ruler.push("goldmark", (state) => {
    const seen = new Set<string>();
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t.type === "heading_open") t.attrSet("id", headingId(inlineText(tokens[i + 1]), seen));
      if (t.type === "inline" && t.children) {
        // GitHub autolinks www. names and full URLs only, not bare domain names
        const kids = t.children;
        for (let k = 0; k < kids.length; k++) {
          const c = kids[k];
          if (c.type !== "link_open" || c.markup !== "linkify") continue;
          const text = kids[k + 1]?.content ?? "";
          if (/^(https?:\/\/|ftp:\/\/|www\.|mailto:)/i.test(text) || text.includes("@")) continue;
          kids.splice(k, 3, { ...kids[k + 1], type: "text" } as Token);
        }
      }
      // task list items: `[ ] ` and `[x] ` at the start of a list item
      if (t.type === "inline" && tokens[i - 2]?.type === "list_item_open" && t.children?.[0]) {
        const first = t.children[0];
        const m2 = /^\[([ xX])\](?=\s)/.exec(first.content);
        if (first.type === "text" && m2) {
          first.content = first.content.slice(3);
          const box = m2[1] === " "
            ? '<input disabled="" type="checkbox">'
            : '<input checked="" disabled="" type="checkbox">';
          t.children.unshift({ ...first, type: "html_inline", content: box } as Token);
        }
      }
    }
  });
  return m;
}

/** Renders Markdown as HTML (raw HTML in it is kept, as Caddy keeps it). */
export async function renderMarkdown(text: string): Promise<string> {
  md ??= load();
  return (await md).render(text);
}
