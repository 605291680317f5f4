/**
 * The browser entry of the reference app's sign-in pages: hydrates the server-rendered page so
 * its form posts with `fetch`, shows errors inline and goes to the `redirect` the site answers.
 * `client_bundle.ts` bundles this file for the browser when the app starts.
 *
 * @module
 */
import { hydrateAuthPage } from "../preact.ts";

hydrateAuthPage();
