import assert from "node:assert/strict";
import { verifyRelay } from "../../mod.ts";
import { Browser, consent, startHarness, throughBroker } from "./_relay_harness.ts";

const DEMO = "/relay-demo";

/** Starts at the demo site; returns the broker URL it sent the browser to. */
async function startAtSite(b: Browser, provider = "github", site = DEMO): Promise<string> {
  const res = await b.get(`${site}/api/auth/relay/start?provider=${provider}`);
  assert.equal(res.status, 302);
  assert.ok(res.location?.includes("/broker/start?"));
  return res.location!;
}

Deno.test("relay: each provider of the dev IdP signs in to the demo site through the broker", async () => {
  const h = await startHarness();
  try {
    for (const provider of ["google", "github", "microsoft"]) {
      const b = new Browser(h.origin);
      const back = await throughBroker(
        b,
        await startAtSite(b, provider),
        `ada+${provider}@example.com`,
      );
      assert.ok(back.startsWith(`${h.origin}${DEMO}/api/auth/relay/callback?relay=`), back);
      const done = await b.get(back);
      assert.equal(done.status, 302);
      assert.equal(done.location, `${h.origin}${DEMO}`);
      const home = await b.get(DEMO);
      assert.equal(home.status, 200);
      assert.match(
        home.body,
        new RegExp(`Signed in as <strong>ada\\+${provider}@example.com</strong>`),
      );
      // The token carried the verified identity and the nonce, signed for this site only.
      const claims = await verifyRelay(
        "relay-demo-secret-0123456789",
        new URL(back).searchParams.get("relay")!,
      );
      assert.equal(claims?.provider, provider);
      assert.ok(claims?.providerUserId);
    }
  } finally {
    await h.close();
  }
});

Deno.test("relay attack: a token replayed after 2 minutes is rejected (controlled clock)", async () => {
  const h = await startHarness();
  try {
    const b = new Browser(h.origin);
    const back = await throughBroker(b, await startAtSite(b), "ada@example.com");
    h.clock.now += 121_000;
    const late = await b.get(back);
    assert.equal(late.status, 302);
    assert.equal(late.location, `${h.origin}${DEMO}/login?oauth_error=relay_invalid`);
    assert.equal((await b.get(DEMO)).status, 302, "no session");

    // Control: the same steps without the delay succeed, and the used token cannot be replayed.
    const b2 = new Browser(h.origin);
    const back2 = await throughBroker(b2, await startAtSite(b2), "ada@example.com");
    h.clock.now += 119_000;
    assert.equal((await b2.get(back2)).location, `${h.origin}${DEMO}`);
    const replay = await b2.get(back2);
    assert.equal(replay.location, `${h.origin}${DEMO}/login?oauth_error=relay_invalid`);
  } finally {
    await h.close();
  }
});

Deno.test("relay attack: a token the broker made for another site is rejected", async () => {
  const h = await startHarness();
  try {
    const b = new Browser(h.origin);
    const demoStart = new URL(await startAtSite(b)); // keeps the demo site's nonce cookie
    const nonce = demoStart.searchParams.get("nonce")!;
    // Same nonce, but asked for the other registered site: signed with the other site's secret.
    const other = new URL("/broker/start", h.origin);
    other.searchParams.set("site", "relay-other");
    other.searchParams.set("return_to", `${h.origin}/relay-other/api/auth/relay/callback`);
    other.searchParams.set("nonce", nonce);
    other.searchParams.set("provider", "google");
    const back = await throughBroker(b, other.href, "mallory@example.com");
    const token = new URL(back).searchParams.get("relay")!;
    assert.equal((await verifyRelay("relay-other-secret-0123456789", token))?.nonce, nonce);
    const res = await b.get(`${DEMO}/api/auth/relay/callback?relay=${encodeURIComponent(token)}`);
    assert.equal(res.location, `${h.origin}${DEMO}/login?oauth_error=relay_invalid`);
    assert.equal((await b.get(DEMO)).status, 302, "no session");
  } finally {
    await h.close();
  }
});

Deno.test("relay attack: a token with a nonce other than the one the site kept is rejected", async () => {
  const h = await startHarness();
  try {
    const victim = new Browser(h.origin);
    await startAtSite(victim); // victim's nonce cookie
    const attacker = new Browser(h.origin);
    const attackerStart = await startAtSite(attacker); // attacker's own nonce
    const back = await throughBroker(attacker, attackerStart, "mallory@example.com");
    // The attacker makes the victim's browser land on the callback with the attacker's token.
    const res = await victim.get(back);
    assert.equal(res.location, `${h.origin}${DEMO}/login?oauth_error=relay_invalid`);
    assert.equal((await victim.get(DEMO)).status, 302, "no session for the victim");
    // Without any nonce cookie it is rejected too.
    const fresh = new Browser(h.origin);
    assert.equal(
      (await fresh.get(back)).location,
      `${h.origin}${DEMO}/login?oauth_error=relay_invalid`,
    );
  } finally {
    await h.close();
  }
});

Deno.test("relay attack: unregistered sites and return URLs get neither a token nor a redirect", async () => {
  const h = await startHarness();
  try {
    const b = new Browser(h.origin);
    const good = new URL(await startAtSite(b));
    const cases: [string, string][] = [
      ["site", "not-registered"],
      ["return_to", "https://evil.example/relay-demo/api/auth/relay/callback"],
      ["return_to", `${h.origin}/relay-demo/api/auth/relay/callback?x=1`],
      ["return_to", `${h.origin}/relay-demo/api/auth/relay/callback#x`],
      ["return_to", `${h.origin}/relay-other/api/auth/relay/callback`], // the other site's URL
      ["return_to", `//evil.example/relay-demo/api/auth/relay/callback`],
      ["return_to", "/relay-demo/api/auth/relay/callback"],
      ["nonce", "short"],
    ];
    for (const [key, value] of cases) {
      const bad = new URL(good);
      bad.searchParams.set(key, value);
      const res = await b.get(bad.href);
      assert.equal(res.status, 400, `${key}=${value}`);
      assert.equal(res.location, null);
      assert.ok(!b.cookies.has("__Host-gh-broker-pending"));
    }
    // A callback without the broker's pending cookie never redirects anywhere.
    const stray = await new Browser(h.origin).get(
      "/broker/api/auth/oauth/github/callback?code=x&state=y",
    );
    assert.equal(stray.status, 400);
    assert.equal(stray.location, null);
  } finally {
    await h.close();
  }
});

Deno.test("relay: refusal at the provider comes back as oauth_error, shown in words", async () => {
  const h = await startHarness();
  try {
    const b = new Browser(h.origin);
    const start = await b.get(await startAtSite(b));
    const back = await consent(b, start.location!, "ada@example.com", "deny");
    const cb = await b.get(back);
    assert.ok(
      cb.location?.startsWith(
        `${h.origin}${DEMO}/api/auth/relay/callback?oauth_error=access_denied`,
      ),
    );
    const site = await b.get(cb.location!);
    assert.equal(site.location, `${h.origin}${DEMO}/login?oauth_error=access_denied`);
    const login = await b.get(site.location!);
    assert.match(login.body, /Sign-in was cancelled at the provider\./);
    assert.doesNotMatch(login.body, /access_denied/);
  } finally {
    await h.close();
  }
});

Deno.test("relay: an e-mail the site does not allow gets 403 forbidden", async () => {
  const h = await startHarness({
    RELAY_OTHER_ACCESS_MODE: "owners",
    RELAY_OTHER_OWNER_EMAILS: "owner@example.com",
  });
  try {
    const b = new Browser(h.origin);
    const back = await throughBroker(
      b,
      await startAtSite(b, "github", "/relay-other"),
      "ada@example.com",
    );
    const res = await b.get(back);
    assert.equal(res.status, 403);
    assert.equal(res.body, "forbidden");
    const ok = new Browser(h.origin);
    const back2 = await throughBroker(
      ok,
      await startAtSite(ok, "github", "/relay-other"),
      "owner@example.com",
    );
    assert.equal((await ok.get(back2)).location, `${h.origin}/relay-other`);
  } finally {
    await h.close();
  }
});

Deno.test("relay: without a provider the broker asks which one, keeping the request", async () => {
  const h = await startHarness();
  try {
    const b = new Browser(h.origin);
    const start = new URL(await startAtSite(b));
    start.searchParams.delete("provider");
    const choice = await b.get(start.href);
    assert.equal(choice.status, 200);
    const links = [...choice.body.matchAll(/href="([^"]+)"/g)].map((m) =>
      m[1].replaceAll("&amp;", "&")
    );
    assert.equal(links.length, 3);
    const github = links.find((l) => l.endsWith("provider=github"))!;
    const back = await throughBroker(b, github, "ada@example.com");
    assert.equal((await b.get(back)).location, `${h.origin}${DEMO}`);
  } finally {
    await h.close();
  }
});
