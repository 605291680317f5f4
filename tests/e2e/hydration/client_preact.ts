/// <reference lib="dom" />
/** Browser entry of the Preact test app: hydrates the server-rendered `App`. */
import { h, hydrate } from "preact";
import { App } from "./app_preact.ts";
import { type AppProps, PROPS_ID } from "./props.ts";

const props = JSON.parse(document.getElementById(PROPS_ID)!.textContent!) as AppProps;
hydrate(h(App, props), document.getElementById("root")!);
