/**
 * Server-render cost of the sign-in pages: one whole document per iteration, as a site does
 * per request.
 */
import { renderAuthDocument } from "../preact.ts";

Deno.bench("renderAuthDocument: login with SSO buttons", { group: "pages", baseline: true }, () => {
  renderAuthDocument(
    {
      page: "login",
      props: { action: "/api/auth/login", signupHref: "/signup", forgotHref: "/forgot" },
      sso: { providers: ["google", "github", "microsoft"] },
    },
    { scriptSrc: "/auth-client.js" },
  );
});

Deno.bench("renderAuthDocument: signup", { group: "pages" }, () => {
  renderAuthDocument({ page: "signup", props: { loginHref: "/login" } }, { scriptSrc: "/a.js" });
});

Deno.bench("renderAuthDocument: reset with an error", { group: "pages" }, () => {
  renderAuthDocument({ page: "reset", props: { token: "x".repeat(120), error: "invalid_token" } });
});
