// An HTTP/2 client in Node (the real `node` on PATH, not Deno's node:http2) for the push
// tests: one session, the given requests one after the other, every pushed stream recorded
// with the request it came with. Prints one JSON document to stdout.
//
//   node push_client.mjs <origin> <push: 1|0> <requests JSON> [<CA PEM file>]
//
// requests: [{ "path": "/x", "method": "GET", "headers": { ... } }, ...]
import http2 from "node:http2";
import { readFileSync } from "node:fs";

const [origin, pushArg, requestsJson, caFile] = process.argv.slice(2);
const requests = JSON.parse(requestsJson);
const session = http2.connect(origin, {
  ca: caFile ? readFileSync(caFile, "utf8") : undefined,
  settings: { enablePush: pushArg === "1" },
});
session.on("error", (e) => {
  console.error(`session error: ${e.message}`);
  process.exit(2);
});

/** Headers without the ones that change from run to run. */
function stable(h) {
  const out = {};
  for (const [k, v] of Object.entries(h)) if (k !== "date") out[k] = v;
  return out;
}

let current = null;
session.on("stream", (pushed, promised) => {
  const rec = { promised: { ...promised }, status: 0, headers: {}, body: "" };
  const target = current;
  target.pushes.push(rec);
  target.pending.push(
    new Promise((resolve) => {
      pushed.on("push", (h) => {
        rec.status = h[":status"];
        rec.headers = stable(h);
      });
      pushed.setEncoding("utf8");
      pushed.on("data", (d) => (rec.body += d));
      pushed.on("end", resolve);
      pushed.on("close", resolve);
      pushed.on("error", (e) => {
        rec.error = e.message;
        resolve();
      });
    }),
  );
});

const results = [];
for (const r of requests) {
  current = { pushes: [], pending: [] };
  const res = await new Promise((resolve, reject) => {
    const out = { status: 0, headers: {}, body: "" };
    const st = session.request({
      ":path": r.path,
      ":method": r.method ?? "GET",
      ...(r.headers ?? {}),
    });
    st.on("response", (h) => {
      out.status = h[":status"];
      out.headers = stable(h);
    });
    st.setEncoding("utf8");
    st.on("data", (d) => (out.body += d));
    st.on("end", () => resolve(out));
    st.on("error", reject);
    st.end();
  });
  await Promise.all(current.pending);
  res.pushes = current.pushes;
  results.push(res);
}
session.close();
console.log(JSON.stringify({ results }));
