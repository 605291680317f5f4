/**
 * Sign-out on the real app process (`deno run -A app/main.ts` on a loopback port): on the
 * users site, the owner site, the relay demo and the operator's console, signing out ends
 * that session in every copy of its cookie (another tab's, a stolen one), while another
 * session of the same person goes on. Before, a sign-out only cleared the browser's cookie
 * and a copy kept working for the cookie's whole life.
 */
import assert from "node:assert/strict";
import { startAppProcess } from "./_process.ts";
import { Browser, copyOf, newUser, signedIn, signIn } from "./_users_site.ts";
import { throughBroker } from "../app/_relay_harness.ts";
import { DEV_OWNER_EMAIL, DEV_OWNER_PASSWORD } from "../../app/owner.ts";

Deno.test("sign-out ends a copied cookie on every site of the real app; other sessions go on", async (t) => {
  const app = await startAppProcess();
  const origin = `http://127.0.0.1:${app.port}`;
  try {
    await t.step("users site", async () => {
      const email = "sign-out@example.com";
      const password = "a passphrase for the sign-out test";
      const laptop = new Browser(origin);
      await newUser(laptop, email, password);
      const phone = new Browser(origin);
      assert.equal((await signIn(phone, email, password)).status, 200);
      const stolen = copyOf(laptop);
      assert.equal(await signedIn(stolen), true, "the copy works before the sign-out");

      const out = await laptop.post("/users/logout", {});
      assert.equal(out.status, 303);
      assert.equal(out.location, `${origin}/users/login?signed_out=1`);
      assert.equal(laptop.cookies.has("__Host-users-session"), false, "cleared here");
      assert.equal(await signedIn(stolen), false, "the copied cookie stopped working");
      assert.equal(await signedIn(phone), true, "the other device is still signed in");
      // Signing in again is a new session.
      assert.equal((await signIn(laptop, email, password)).status, 200);
      assert.equal(await signedIn(laptop), true);
      assert.equal(await signedIn(stolen), false);
    });

    await t.step("owner site", async () => {
      const owner = async () => {
        const b = new Browser(origin);
        const r = await b.post("/owner/api/auth/login", {
          email: DEV_OWNER_EMAIL,
          password: DEV_OWNER_PASSWORD,
        });
        assert.equal(r.status, 302, r.body);
        assert.ok(b.cookies.has("__Host-owner-session"));
        return b;
      };
      const laptop = await owner();
      const phone = await owner();
      const stolen = copyOf(laptop);
      assert.equal(await signedIn(stolen, "/owner/"), true);
      const out = await laptop.post("/owner/logout", {});
      assert.equal(out.status, 302);
      assert.equal(out.location, `${origin}/owner/login`);
      assert.equal(await signedIn(stolen, "/owner/"), false, "the copied cookie stopped working");
      assert.equal(await signedIn(laptop, "/owner/"), false);
      assert.equal(await signedIn(phone, "/owner/"), true, "the other device is still signed in");
    });

    await t.step("relay demo", async () => {
      const person = async () => {
        const b = new Browser(origin);
        const start = await b.get("/relay-demo/api/auth/relay/start?provider=github");
        assert.equal(start.status, 302);
        const back = await throughBroker(b, start.location!, "ada@example.com");
        const done = await b.get(back);
        assert.equal(done.status, 302);
        assert.ok(b.cookies.has("__Host-gh-relay-demo"));
        return b;
      };
      const laptop = await person();
      const phone = await person();
      const stolen = copyOf(laptop);
      assert.equal(await signedIn(stolen, "/relay-demo/"), true);
      const out = await laptop.post("/relay-demo/api/auth/logout", {});
      assert.equal(out.status, 302);
      assert.equal(out.location, `${origin}/relay-demo/login`);
      assert.equal(
        await signedIn(stolen, "/relay-demo/"),
        false,
        "the copied cookie stopped working",
      );
      assert.equal(await signedIn(phone, "/relay-demo/"), true, "the other browser goes on");
    });

    await t.step("operator's console", async () => {
      const operator = async () => {
        const b = new Browser(origin);
        // A form post (the console reads forms only); without Accept: text/html it answers JSON.
        const r = await b.post("/admin/api/auth/login", {
          email: DEV_OWNER_EMAIL,
          password: DEV_OWNER_PASSWORD,
        });
        assert.equal(r.status, 200, r.body);
        assert.ok(b.cookies.has("__Host-console-session"));
        return b;
      };
      const laptop = await operator();
      const phone = await operator();
      const stolen = copyOf(laptop);
      const home = await laptop.get("/admin/");
      assert.equal(home.status, 200);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1];
      assert.ok(csrf, "the sign-out form carries the CSRF token");
      assert.equal(await signedIn(stolen, "/admin/"), true);
      const out = await laptop.post("/admin/logout", { _csrf: csrf });
      assert.equal(out.status, 303);
      assert.equal(out.location, `${origin}/admin/login?signed_out=1`);
      assert.equal(await signedIn(stolen, "/admin/"), false, "the copied cookie stopped working");
      assert.equal(await signedIn(phone, "/admin/"), true, "the other device is still signed in");
    });
  } finally {
    await app.close();
  }
});
