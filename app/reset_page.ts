/**
 * The page of a password-reset link that no longer works. The multi-user site checks the link
 * when it is opened (`checkResetToken`), so a used, expired or stale link says so in words at
 * once, with the next step (ask for a new link), instead of showing a form that can only fail
 * after the new password is typed.
 *
 * @module
 */
import { h } from "preact";
import { RESET_TTL_HOURS } from "../d1.ts";
import { USERS_SITE } from "./account_page.ts";
import { sitePageResponse } from "./site_page.ts";

/**
 * The answer to opening a reset link that cannot be used: 400 with a page saying why and
 * leading to a new link. `missing` is for a link without its token (cut short when copied).
 *
 * @example
 * ```ts
 * import { deadResetLinkPage } from "./reset_page.ts";
 * const res = deadResetLinkPage("/users");
 * console.log(res.status); // 400
 * ```
 */
export function deadResetLinkPage(base: string, o: { missing?: boolean } = {}): Response {
  const hours = RESET_TTL_HOURS === 1 ? "1 hour" : `${RESET_TTL_HOURS} hours`;
  return sitePageResponse({
    site: USERS_SITE,
    home: `${base}/`,
    title: "This reset link no longer works",
    error: o.missing
      ? "This link is incomplete: the part after “?token=” is missing. Open the link from the e-mail again, or ask for a new one."
      : `This password reset link was already used or has expired (a link works for ${hours}), or the password or e-mail of the account changed after it was sent.`,
    body: [
      h(
        "p",
        { key: "why" },
        "Your password is unchanged. Ask for a new link and use the newest e-mail; each link works once.",
      ),
      h(
        "p",
        { key: "next" },
        h("a", { class: "button", href: `${base}/forgot` }, "Send me a new link"),
        " ",
        h("a", { class: "button secondary", href: `${base}/login` }, "Sign in"),
      ),
    ],
  }, 400);
}
