/**
 * What current Caddy's templates do that Caddy 2.6.2 (the oracle here) does not, each checked
 * on a real server against the behaviour current Caddy's source gives it (cited per case:
 * caddyserver/caddy `modules/caddyhttp/templates/tplcontext.go` and the commit that made it,
 * or the Go release whose text/template current Caddy is built with, go.mod `go 1.25.1`);
 * and the limits Gatehouse sets where Caddy has none (include depth, template depth).
 */
import assert from "node:assert/strict";
import { askGatehouse, routes, writeTree } from "./_oracle.ts";

const CASES: [string, string, string][] = [
  // readFile: the file as it is, not run ("templates: Add `readFile` action that does not
  // evaluate templates", #5553)
  ["read.html", '{{readFile "raw.txt"}}', "{{not run}}"],
  // ph: the short name of placeholder (tplcontext.go NewTemplate's function map)
  ["ph.html", '{{ph "http.request.method"}}', "GET"],
  // fileStat (#5497)
  [
    "stat.html",
    '{{$s := fileStat "raw.txt"}}{{$s.Name}} {{$s.Size}} {{$s.IsDir}}',
    "raw.txt 11 false",
  ],
  // .ClientIP ("templates: Clarify `include` args docs, add `.ClientIP`", #5898)
  ["ip.html", "{{.ClientIP}}", "127.0.0.1"],
  // pathEscape (#6278)
  ["esc.html", '{{pathEscape "50%_valid_filename?.jpg"}}', "50%25_valid_filename%3F.jpg"],
  // missingkey=zero ("templates: Offically make templates extensible", #5939): a header that
  // is not there is an empty []string; a missing key of a map of interfaces is still no value
  ["zero.html", '{{.Req.Header.Missing}} {{(dict "a" 1).b}}', "[] <no value>"],
  // stripHTML as PHP's strip_tags (GHSA-vcc4-2c75-vc9v, #7785)
  [
    "strip.html",
    '{{stripHTML "<<>img src=x onerror=alert(\'XSS\')>"}}|{{stripHTML "hello <world"}}|{{stripHTML "<<<<<>>>>><b>hi</b>"}}',
    "|hello |hi",
  ],
  // maybe: a function no extension provides is ignored (tplcontext.go funcMaybe)
  ["maybe.html", '[{{maybe "nosuch" 1 2}}]', "[]"],
  // Go 1.22: range over an integer
  ["rangeint.html", "{{range 3}}{{.}}{{end}} {{range $i := 2}}{{$i}}{{end}}", "012 01"],
  // Go 1.23: else with
  ["elsewith.html", '{{with ""}}a{{else with "b"}}{{.}}{{else}}c{{end}}', "b"],
];

Deno.test("templates: current Caddy's functions and Go's newer text/template", async () => {
  const files: Record<string, string> = { "raw.txt": "{{not run}}" };
  for (const [name, src] of CASES) files[name] = src;
  const root = await writeTree(files);
  try {
    const answers = await askGatehouse(routes(root), CASES.map(([n]) => ({ path: `/${n}` })));
    CASES.forEach(([name, , want], i) => {
      assert.equal(answers[i].status, 200, `${name}: ${answers[i].error}`);
      assert.equal(answers[i].body, want, name);
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("templates: include and template depth are limited; httpInclude goes through the server, cycles stop at 3", async () => {
  const root = await writeTree({
    "self.html": '{{include "self.html"}}',
    "deep.html": '{{define "r"}}{{template "r" .}}{{end}}{{template "r" 1}}',
    "outer.html": 'outer({{httpInclude "/inner.html?x=1"}})',
    "inner.html":
      'inner {{.Req.URL.RawQuery}} {{.RemoteIP}} {{.Req.Header.Get "Caddy-Templates-Include"}}',
    "loop.html": '{{httpInclude "/loop.html"}}',
    "gone.html": '{{httpInclude "/nothing.html"}}',
    "imp.html": '{{import "defs.html"}}{{template "hi" "x"}}',
    "defs.html": '{{define "hi"}}hi {{.}}{{end}}',
  });
  try {
    const answers = await askGatehouse(routes(root), [
      { path: "/self.html" },
      { path: "/deep.html" },
      { path: "/outer.html" },
      { path: "/gone.html" },
      { path: "/imp.html" },
    ]);
    const [self, deep, outer, gone, imp] = answers;
    // the virtual requests of a cycle fail and are logged each: on a server of their own
    const [loop] = await askGatehouse(routes(root), [{ path: "/loop.html" }]);
    assert.equal(self.status, 500);
    assert.match(self.error!, /include nested too deeply \(more than 32 levels\)/);
    assert.equal(deep.status, 500);
    assert.match(deep.error!, /exceeded maximum template depth \(1000\)/);
    assert.equal(outer.status, 200, outer.error);
    assert.equal(outer.body, "outer(inner x=1 127.0.0.1 1)");
    assert.equal(loop.status, 500);
    assert.match(loop.error!, /virtual request cycle/);
    assert.equal((loop.error!.match(/error calling httpInclude/g) ?? []).length, 1);
    assert.equal(gone.status, 500);
    assert.match(gone.error!, /error calling httpInclude: http 404/);
    assert.equal(imp.body, "hi x");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
