/** @jsxImportSource react */
/** @jsxImportSourceTypes @types/react */
/// <reference lib="dom" />
/** Browser entry of the React test app: hydrates the server-rendered `App`. */
import { hydrateRoot } from "react-dom/client";
import { App } from "./app_react.tsx";
import { type AppProps, PROPS_ID } from "./props.ts";

const props = JSON.parse(document.getElementById(PROPS_ID)!.textContent!) as AppProps;
hydrateRoot(document.getElementById("root")!, <App {...props} />);
