/**
 * The template engine without the network: parsing and running a typical page (a dozen
 * actions, a range over 50 items with printf, an if/else chain), the same page already
 * parsed, and `markdown` of a 2 KiB document (markdown-it loaded).
 * `deno bench -A bench/http/templates_bench.ts`; figures in bench/http/README.md.
 */
import { Template } from "../../lib/server/http/handlers/templates/gotemplate/mod.ts";
import { SPRIG } from "../../lib/server/http/handlers/templates/sprig.ts";
import { renderMarkdown } from "../../lib/server/http/handlers/templates/markdown.ts";

const PAGE = `<!doctype html><html><head><title>{{.title}}</title></head><body>
<h1>{{.title | upper}}</h1>{{/* a comment */}}
{{- range $i, $item := .items}}
  <li class="{{if eq (mod $i 2) 0}}even{{else}}odd{{end}}">{{$i}}: {{printf "%-10s %5.2f" $item.name $item.price}}</li>
{{- end}}
{{with .footer}}<footer>{{.}}</footer>{{else}}<footer>none</footer>{{end}}
{{if gt (len .items) 10}}many{{else if gt (len .items) 0}}some{{else}}none{{end}}
</body></html>`;

const DATA = new Map<string, unknown>([
  ["title", "Bench page"],
  ["footer", "the end"],
  [
    "items",
    Array.from(
      { length: 50 },
      (_, i) => new Map<string, unknown>([["name", `item${i}`], ["price", i * 1.25]]),
    ),
  ],
]);

const parsed = new Template("page", { funcs: [SPRIG] }).parse(PAGE);
const MD =
  ("# Title\n\nSome *text* with `code` and a [link](http://x.test).\n\n- a\n- b\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n")
    .repeat(12);
await renderMarkdown("warm up");

Deno.bench("templates: parse and run a page (50-item range, printf)", async () => {
  await new Template("page", { funcs: [SPRIG] }).parse(PAGE).execute(DATA);
});

Deno.bench("templates: run the page already parsed", async () => {
  await parsed.execute(DATA);
});

Deno.bench("templates: markdown of a 2 KiB document", async () => {
  await renderMarkdown(MD);
});
