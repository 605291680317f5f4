/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/// <reference lib="dom" />
/**
 * Browser entry of the React factor site (`factors_site.tsx`): `hydrateAuthPage` of the React
 * build hydrates the sign-in pages with `react-dom`'s `hydrateRoot` (the default `onSuccess`:
 * go to the answer's `redirect`); on the account page, the React build's `PasskeyRegister`
 * is rendered into `#passkey-register`. Once React has committed, the document is marked
 * `data-hydrated="react"`.
 */
import { type ReactNode, useEffect } from "react";
import { createRoot, hydrateRoot } from "react-dom/client";
import { hydrateAuthPage, PasskeyRegister } from "@gatehouse/gatehouse/react";

function Hydrated(props: { children: ReactNode }) {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "react";
  }, []);
  return <>{props.children}</>;
}

const found = hydrateAuthPage({
  hydrateRoot: (container, element) => hydrateRoot(container, <Hydrated>{element}</Hydrated>),
});
const root = document.getElementById("passkey-register");
const data = document.getElementById("passkey-register-data")?.textContent;
if (!found && root && data) {
  createRoot(root).render(
    <Hydrated>
      <PasskeyRegister
        actions={JSON.parse(data)}
        onSuccess={(answer) => {
          if (typeof answer.redirect === "string") location.assign(answer.redirect);
        }}
      />
    </Hydrated>,
  );
}
