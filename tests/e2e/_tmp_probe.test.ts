import { launch } from "./_harness.ts";
import { axeCheck } from "./_console.ts";
Deno.test({ name: "probe", sanitizeOps: false, sanitizeResources: false, async fn() {
  const b = await launch();
  const ctx = await b.newContext({ javaScriptEnabled: false });
  const p = await ctx.newPage();
  await p.setContent(`<html lang="en"><head><title>x</title></head><body><main><h1>Hi</h1><script>document.body.append("JSRAN")</script></main></body></html>`);
  console.log("text", await p.textContent("body"));
  console.log("axe", await axeCheck(p, "probe"));
  await b.close();
}});
