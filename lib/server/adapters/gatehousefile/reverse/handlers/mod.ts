/**
 * The handler table of the JSON → Gatehousefile direction: handler module name → the function
 * writing it as a directive. A new handler is one file plus one line here.
 *
 * @module
 */
import type { HandlerReverser } from "../context.ts";
import { encode } from "./encode.ts";
import { error } from "./error.ts";
import { fileServer } from "./file_server.ts";
import { headers } from "./headers.ts";
import { acmeServer, intercept, logAppend, map, metrics, push, tracing } from "./more.ts";
import { reverseProxy } from "./reverse_proxy.ts";
import { rewrite } from "./rewrite.ts";
import {
  authentication,
  copyResponse,
  copyResponseHeaders,
  invoke,
  requestBody,
  templates,
} from "./small.ts";
import { staticResponse } from "./static_response.ts";
import { subroute } from "./subroute.ts";
import { vars } from "./vars.ts";

/** Handler module name → reverser. */
export const HANDLERS: Record<string, HandlerReverser> = {
  acme_server: acmeServer,
  authentication,
  copy_response: copyResponse,
  copy_response_headers: copyResponseHeaders,
  encode,
  error,
  file_server: fileServer,
  headers,
  intercept,
  invoke,
  log_append: logAppend,
  map,
  metrics,
  push,
  request_body: requestBody,
  reverse_proxy: reverseProxy,
  rewrite,
  static_response: staticResponse,
  subroute,
  templates,
  tracing,
  vars,
};
