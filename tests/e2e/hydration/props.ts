/** What the server hands the test app: the page and the values from its URL. */
export interface AppProps {
  page: "login" | "signup" | "forgot" | "reset" | "verify";
  error?: string;
  sent?: boolean;
  token?: string;
  email?: string;
}

/** Style overrides every page of the test app uses. */
export const APP_STYLES = { button: { background: "rgb(15, 118, 110)" } };

/** Id of the JSON script holding the props. */
export const PROPS_ID = "app-props";
