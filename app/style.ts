/**
 * The stylesheet of the app's pages after sign-in (the console, the account page, the owner's
 * home), in the sign-in pages' visual language: its colours, font, radii and button come from
 * the toolkit's `defaultStyles`, so those pages and the sign-in card look like one product. Text
 * and controls meet WCAG AA contrast; focus is always visible; the console's header holds on one
 * line at 1280 px; below 40rem (a 390 px phone) the navigation wraps, each row of a table
 * becomes a card of its own that names every column (nothing hidden, nothing wider than the
 * screen), long words and links wrap, and forms take the whole width.
 *
 * @module
 */
import { defaultStyles } from "../preact.ts";

const s = defaultStyles;
const PAGE = String(s.page.background);
const TEXT = String(s.page.color);
const PRIMARY = String(s.button.background);
const DANGER = String(s.error.color);
const OK = String(s.notice.color);
const BORDER = String(s.input.border).split(" ").pop()!;
const RADIUS = String(s.card.borderRadius);
const FIELD_RADIUS = String(s.input.borderRadius);

/** The stylesheet (served by the console at `<console>/console.css`, inlined elsewhere). */
export const APP_CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: ${PAGE}; color: ${TEXT}; font-family: ${s.page.fontFamily};
  line-height: 1.5; }
a { color: ${PRIMARY}; }
:focus-visible { outline: 3px solid ${PRIMARY}; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; }
.skip:focus { left: .5rem; z-index: 10; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.top { background: #fff; border-bottom: 1px solid #d1d5db; }
.top-inner { max-width: 72rem; margin: 0 auto; padding: .75rem 1rem; display: flex;
  flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
.brand { font-weight: 700; color: ${TEXT}; text-decoration: none; font-size: 1.1rem; }
.nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem; }
.nav a { display: inline-block; padding: .35rem .6rem; border-radius: ${FIELD_RADIUS};
  color: ${TEXT}; text-decoration: none; font-weight: 600; }
.nav a:hover { background: ${PAGE}; }
.nav a[aria-current="page"] { background: ${PRIMARY}; color: #fff; }
.who { margin-left: auto; display: flex; gap: .75rem; align-items: center; flex-wrap: wrap;
  color: #374151; font-size: .95rem; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
main:focus { outline: none; }
h1, h2, .lead, .crumbs, dd, .secret { overflow-wrap: anywhere; }
main > .actions, nav.actions { margin: 0 0 1rem; }
h1 { font-size: ${s.title.fontSize}; line-height: ${s.title.lineHeight}; margin: 0 0 1rem;
  font-weight: ${s.title.fontWeight}; }
h2 { font-size: 1.2rem; margin: 0 0 .75rem; }
.card { background: #fff; border-radius: ${RADIUS}; box-shadow: ${s.card.boxShadow};
  padding: 1.25rem; margin: 0 0 1.25rem; }
.card > :last-child { margin-bottom: 0; }
.grid { display: grid; gap: 1.25rem; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); }
.muted { color: #4b5563; }
.lead { color: #374151; margin: -.5rem 0 1.25rem; }
form.stack { display: flex; flex-direction: column; gap: .9rem; max-width: 36rem; }
form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: 0; }
.field { display: flex; flex-direction: column; gap: .3rem; }
.field label, .label { font-weight: 600; font-size: .95rem; }
.hint { color: #4b5563; font-size: .9rem; margin: 0; }
input[type=text], input[type=email], input[type=password], input[type=search], input[type=url],
select, textarea { font: inherit; padding: .55rem .7rem; border: ${s.input.border};
  border-radius: ${FIELD_RADIUS}; background: #fff; color: ${TEXT}; max-width: 100%; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem;
  width: 100%; min-height: 12rem; }
input[type=checkbox] { width: 1.1rem; height: 1.1rem; }
.check { display: flex; gap: .5rem; align-items: center; font-weight: 600; }
button, .button { font: inherit; font-weight: 600; padding: .55rem .95rem; border: none;
  border-radius: ${FIELD_RADIUS}; background: ${PRIMARY}; color: #fff; cursor: pointer;
  text-decoration: none; display: inline-block; line-height: 1.4; }
button.secondary, .button.secondary { background: #fff; color: ${TEXT}; border: 1px solid ${BORDER}; }
button.danger, .button.danger { background: ${DANGER}; }
button[disabled] { opacity: .6; cursor: progress; }
[hidden] { display: none !important; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.notice, .alert { border-radius: ${FIELD_RADIUS}; padding: .75rem 1rem; margin: 0 0 1rem;
  font-weight: 600; }
.notice { background: #ecfdf5; color: ${OK}; border: 1px solid #a7f3d0; }
.alert { background: #fef2f2; color: ${DANGER}; border: 1px solid #fecaca; }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: ${PAGE};
  border: 1px dashed ${BORDER}; padding: .6rem .75rem; border-radius: ${FIELD_RADIUS};
  word-break: break-all; user-select: all; }
.table-wrap { overflow-x: auto; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: .95rem; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid #e5e7eb; vertical-align: top;
  overflow-wrap: normal; min-width: 5rem; }
td code { white-space: nowrap; }
th { background: #f9fafb; font-weight: 650; white-space: nowrap; }
td.num, th.num { text-align: right; }
.badge { display: inline-block; font-size: .8rem; font-weight: 700; padding: .05rem .45rem;
  border-radius: 999px; background: #e5e7eb; color: #1f2937; white-space: nowrap; }
.badge.ok { background: #d1fae5; color: #065f46; }
.badge.warn { background: #fef3c7; color: #78350f; }
.badge.bad { background: #fee2e2; color: #991b1b; }
.badge.info { background: #dbeafe; color: #1e3a8a; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; color: #374151; }
dl.facts dd { margin: 0; word-break: break-word; }
pre.json { background: #0f172a; color: #e2e8f0; padding: 1rem; border-radius: ${FIELD_RADIUS};
  overflow: auto; font-size: .85rem; max-height: 32rem; margin: 0 0 1rem; }
.crumbs ol { list-style: none; padding: 0; margin: 0 0 1rem; display: flex; flex-wrap: wrap; gap: .25rem; }
.crumbs li + li::before { content: "/"; margin-right: .25rem; color: #6b7280; }
.compare { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); }
ul.plain, ol.plain { list-style: none; margin: 0; padding: 0; }
fieldset { border: 1px solid #d1d5db; border-radius: ${FIELD_RADIUS}; padding: .75rem 1rem; margin: 0; }
legend { padding: 0 .25rem; }
.stack-sm { display: flex; flex-direction: column; gap: .5rem; }
.pager { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
.danger-zone { border: 1px solid #fecaca; }
.mail { background: #fff; border-radius: ${RADIUS}; box-shadow: ${s.card.boxShadow};
  padding: 1rem 1.25rem; margin: 0 0 1rem; }
.mail h2 { margin: .25rem 0 .5rem; overflow-wrap: anywhere; }
.mail pre { white-space: pre-wrap; font: inherit; margin: 0 0 .75rem; overflow-wrap: anywhere; }
.mail iframe { width: 100%; height: 20rem; border: 1px solid #e5e7eb; border-radius: ${FIELD_RADIUS}; }
main a { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  .who { margin-left: 0; }
  main { padding: 1rem .75rem 3rem; }
  .card { padding: 1rem; }
  form.stack { max-width: none; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: .35rem; }
  /* a table's rows as cards: every column named, nothing hidden or wider than the screen */
  .table-wrap { overflow-x: auto; }
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; }
  .table-wrap table { background: transparent; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden;
    clip: rect(0 0 0 0); }
  .table-wrap tr { background: #fff; border: 1px solid #e5e7eb; border-radius: ${FIELD_RADIUS};
    padding: .5rem .75rem; margin: 0 0 .75rem; }
  .table-wrap td { display: grid; grid-template-columns: minmax(5.5rem, 35%) minmax(0, 1fr);
    gap: .5rem;
    border: 0; padding: .3rem 0; min-width: 0; overflow-wrap: anywhere; }
  .table-wrap td::before { content: attr(data-label); font-weight: 600; color: #374151; }
  .table-wrap td.num { text-align: left; }
  .table-wrap td > * { min-width: 0; }
  td code { white-space: normal; overflow-wrap: anywhere; }
}
`;
