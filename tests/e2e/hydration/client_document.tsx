/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/// <reference lib="dom" />
/**
 * Browser entry of the document site: `hydrateAuthPage` of the React build hydrates the page
 * `renderAuthDocument` served, with `react-dom`'s `hydrateRoot`. `onSuccess` writes the
 * answer into `#done`, outside the hydrated root. The page element is wrapped in a component
 * that renders it unchanged and, once hydration has committed (effects run then, when the
 * form's handlers are attached), marks the document `data-hydrated="react"`.
 */
import { type ReactNode, useEffect } from "react";
import { hydrateRoot } from "react-dom/client";
import { type AuthResult, hydrateAuthPage } from "@gatehouse/gatehouse/react";

function Hydrated(props: { children: ReactNode }) {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "react";
  }, []);
  return <>{props.children}</>;
}

function showDone(answer: AuthResult) {
  const done = document.getElementById("done") ?? document.createElement("p");
  done.id = "done";
  done.textContent = `Done: ${String(answer.user ?? answer.redirect)}`;
  document.body.prepend(done);
}

const found = hydrateAuthPage({
  hydrateRoot: (container, element) => hydrateRoot(container, <Hydrated>{element}</Hydrated>),
  onSuccess: showDone,
});
if (!found) throw new Error("hydrateAuthPage found no page in the document");
