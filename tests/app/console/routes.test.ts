/**
 * Rights on every route of the console, walking the route table (`consoleRoutes()`), which is
 * checked against the app's real router (every route under `/admin` is in the table or is a
 * public sign-in route), so a new route cannot be forgotten: a signed-out visitor is sent to the sign-in page, a signed-in
 * person without the right gets 403, a cross-site form post is refused by the app and a post
 * without the session's CSRF token by the console; and none of these changes anything (the
 * audit log, where every change is written, stays as it was, and so do the accounts).
 */
import assert from "node:assert/strict";
import { consoleRoutes, PUBLIC_ROUTES, SCREENS } from "../../../app/console/screens.ts";
import { CONSOLE_PATH } from "../../../app/console/mod.ts";
import { createApp } from "../../../app/main.ts";
import { loadAppEnv } from "../../../app/env.ts";
import { type Operator, permits } from "../../../app/console/context.ts";
import { listUsers, setAdmin } from "../../../d1.ts";
import {
  auditCount,
  Browser,
  csrfIn,
  makeUser,
  OWNER,
  signIn,
  startConsoleApp,
  textOf,
} from "./_harness.ts";

const routes = consoleRoutes();
const concrete = (path: string) => `/admin${path.replace(/:[a-z_]+/g, "1")}`;

async function state(app: { db: Parameters<typeof auditCount>[0] }) {
  const users = await listUsers(app.db, { limit: 200 });
  assert.ok(users.ok);
  return {
    audit: await auditCount(app.db),
    users: users.users.map((u) => `${u.email}:${u.isAdmin}`).join(","),
  };
}

Deno.test("console routes: the app's router holds exactly the public routes and the table's, so the walk below misses none", async () => {
  // The real router of the whole app, not the table: a route added anywhere under /admin (in
  // mod.ts, signin.ts, a screen or the app itself) shows up here, and must be in the table the
  // rights walk below goes through, or be one of the public sign-in routes.
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-console-routes-" });
  try {
    const app = await createApp(loadAppEnv({
      MODE: "development",
      DATABASE_URL: `file:${dir}/app.db`,
      MAIL_BLOB_DIR: `${dir}/blobs`,
    }));
    const key = (method: string, path: string) =>
      `${method} ${CONSOLE_PATH}${path}`.replace(/(.)\/$/, "$1");
    const mounted = app.routes
      .filter((r) => r.path === CONSOLE_PATH || r.path.startsWith(`${CONSOLE_PATH}/`))
      .map((r) => key(r.method, r.path.slice(CONSOLE_PATH.length)));
    // The two middlewares (sign-in check, then CSRF) and, after every route, the console's
    // 404 are the only handlers for every method; any other `use`/`all` under /admin fails
    // here until the table and this list say why.
    const middleware = mounted.filter((r) => r.startsWith("ALL "));
    assert.deepEqual(middleware, [
      `ALL ${CONSOLE_PATH}/*`,
      `ALL ${CONSOLE_PATH}/*`,
      `ALL ${CONSOLE_PATH}/*`,
    ]);
    assert.equal(mounted.at(-1), `ALL ${CONSOLE_PATH}/*`, "the 404 comes after every route");
    const handlers = mounted.filter((r) => !r.startsWith("ALL ")).sort();
    const table = [...PUBLIC_ROUTES, ...routes].map((r) => key(r.method, r.path)).sort();
    assert.deepEqual(handlers, table);
    assert.equal(new Set(table).size, table.length, "no route listed twice");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // Every screen route is in the walk, and only sign-in routes are open to visitors.
  assert.equal(routes.length, 1 + SCREENS.reduce((n, s) => n + s.routes.length, 0));
  for (const r of PUBLIC_ROUTES) assert.equal(r.screen, null);
  assert.ok(routes.every((r) => r.screen !== null));
});

Deno.test("console rights: `admin` admits owners and administrators, `owner` owners only", () => {
  const op = (owner: boolean, admin: boolean) => ({ owner, admin }) as Operator;
  assert.deepEqual(
    [op(true, false), op(false, true), op(false, false)].map((o) => permits(o, "admin")),
    [true, true, false],
  );
  assert.deepEqual(
    [op(true, false), op(false, true), op(true, true)].map((o) => permits(o, "owner")),
    [true, false, true],
  );
});

Deno.test("console routes: a signed-out visitor, a non-administrator and a forged post change nothing", async () => {
  const app = await startConsoleApp();
  try {
    const before = await state(app);

    // Signed out: every route sends to the sign-in page.
    const visitor = new Browser(app.origin);
    for (const r of routes) {
      const res = await visitor.send(concrete(r.path), {
        method: r.method,
        headers: { "sec-fetch-site": "same-origin" },
        body: r.method === "POST" ? new URLSearchParams({ _csrf: "x" }) : undefined,
      });
      assert.equal(res.status, r.method === "GET" ? 302 : 303, `${r.method} ${r.path}`);
      assert.match(res.location ?? "", /\/admin\/login\?signed_out=1/, `${r.method} ${r.path}`);
    }

    // A person who may not use the console gets no session at all...
    const userId = await makeUser(app.db, "plain@example.com");
    const refused = await new Browser(app.origin).send("/admin/api/auth/login", {
      method: "POST",
      headers: { accept: "text/html" },
      body: new URLSearchParams({
        email: "plain@example.com",
        password: "correct horse battery staple",
      }),
    });
    assert.equal(refused.status, 403);
    assert.match(textOf(refused.body), /This account may not use the console/);
    const json = await new Browser(app.origin).send("/admin/api/auth/login", {
      method: "POST",
      headers: { accept: "application/json" },
      body: new URLSearchParams({
        email: "plain@example.com",
        password: "correct horse battery staple",
      }),
    });
    assert.equal(json.status, 403);
    assert.deepEqual(JSON.parse(json.body), { error: "forbidden" });

    // ...and one whose right was withdrawn after signing in gets 403 on every route.
    assert.ok((await setAdmin(app.db, { userId, admin: true })).ok);
    const former = await signIn(app.origin, "plain@example.com");
    const home = await former.get("/admin/");
    const token = csrfIn(home.body);
    assert.ok((await setAdmin(app.db, { userId, admin: false })).ok);
    const middle = await state(app);
    for (const r of routes) {
      if (r.path === "/logout") continue;
      const res = await former.send(concrete(r.path), {
        method: r.method,
        headers: { "sec-fetch-site": "same-origin", accept: "text/html" },
        body: r.method === "POST" ? new URLSearchParams({ _csrf: token, admin: "1" }) : undefined,
      });
      assert.equal(res.status, 403, `${r.method} ${r.path}`);
      assert.match(textOf(res.body), /You may not use this page/, `${r.method} ${r.path}`);
    }
    assert.deepEqual(await state(app), middle, "the former administrator changed nothing");

    // An administrator's browser tricked into posting: from another site (the app refuses
    // it), or from a page without this session's token (the console refuses it).
    const owner = await signIn(app.origin, OWNER.email, OWNER.password);
    const ownerHome = await owner.get("/admin/");
    const ownerToken = csrfIn(ownerHome.body);
    const start = await state(app);
    for (const r of routes.filter((r) => r.method === "POST")) {
      const cross = await owner.send(concrete(r.path), {
        method: "POST",
        headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
        body: new URLSearchParams({ _csrf: ownerToken, admin: "1" }),
      });
      assert.equal(cross.status, 403, `cross-site ${r.path}`);
      assert.equal(cross.body, "forbidden");
      for (const wrong of ["", "forged-token", token]) {
        const forged = await owner.send(concrete(r.path), {
          method: "POST",
          headers: { "sec-fetch-site": "same-origin", accept: "text/html" },
          body: new URLSearchParams({ _csrf: wrong, admin: "1" }),
        });
        assert.equal(forged.status, 403, `no token ${r.path}`);
        assert.match(textOf(forged.body), /The form expired or did not come from this console/);
      }
    }
    assert.deepEqual(await state(app), start, "the forged posts changed nothing");
    // The owner is still signed in: the refusals did not end the session.
    assert.equal((await owner.get("/admin/")).status, 200);
    assert.notDeepEqual(before, start);
  } finally {
    await app.close();
  }
});
