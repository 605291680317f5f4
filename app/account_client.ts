/**
 * The browser entry of the multi-user site's account page: the "Add a passkey" form
 * (`PasskeyRegister` of the pages), rendered into the page's `#passkey-register` with the
 * actions of `#passkey-register-data`. It shows only in a browser with WebAuthn; after a
 * passkey is added, the page reloads on the site's answer. `client_bundle.ts` bundles it.
 *
 * @module
 */
import { h, render } from "preact";
import { PasskeyRegister } from "../preact.ts";

const root = document.getElementById("passkey-register");
const data = document.getElementById("passkey-register-data")?.textContent;
if (root && data) {
  render(
    h(PasskeyRegister, {
      actions: JSON.parse(data),
      onSuccess: (answer) => {
        if (typeof answer.redirect === "string") location.assign(answer.redirect);
      },
    }),
    root,
  );
}
