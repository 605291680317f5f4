/**
 * The default directory listing page. A template is HTML with `{{name}}` tokens replaced at
 * render time: `{{title}}` (the path, escaped), `{{breadcrumbs}}` (links to each parent),
 * `{{summary}}` (counts), `{{rows}}` (one `<tr>` per entry), `{{sort_name}}`,
 * `{{sort_size}}`, `{{sort_time}}` (sort links toggling the order). `file-server
 * export-template` prints this default so it can be edited and given as `template_file`.
 *
 * @module
 */

/** The default browse template. */
export const DEFAULT_BROWSE_TEMPLATE: string = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d2733; background: #fbfcfd; }
  header { padding: 1.5rem 2rem; border-bottom: 1px solid #e3e8ee; background: #fff; }
  h1 { font-size: 1.25rem; margin: 0; word-break: break-all; }
  h1 a { color: #2563a8; text-decoration: none; }
  main { padding: 1rem 2rem 3rem; }
  .summary { color: #5b6775; margin: .5rem 0 1rem; }
  table { border-collapse: collapse; width: 100%; max-width: 70rem; }
  th, td { text-align: left; padding: .35rem .75rem; border-bottom: 1px solid #eef1f4; }
  th a { color: inherit; }
  td.size, td.time { white-space: nowrap; color: #5b6775; }
  td a { color: #2563a8; text-decoration: none; }
  td a:hover { text-decoration: underline; }
  .dir a { font-weight: 600; }
  .link { color: #8a6d1d; font-size: .85em; }
</style>
</head>
<body>
<header><h1>{{breadcrumbs}}</h1></header>
<main>
<p class="summary">{{summary}}</p>
<table>
<thead><tr><th>{{sort_name}}</th><th>{{sort_size}}</th><th>{{sort_time}}</th></tr></thead>
<tbody>
{{rows}}
</tbody>
</table>
</main>
</body>
</html>
`;
