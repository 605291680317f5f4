/** PHP scripts the FastCGI tests serve through a real php-fpm. */

/** Everything the script saw, as JSON (request time fields left out: they change). */
export const ENV_PHP = `<?php
$s = $_SERVER;
unset($s["REQUEST_TIME"], $s["REQUEST_TIME_FLOAT"], $s["argv"], $s["argc"]);
ksort($s);
header("Content-Type: application/json");
header("X-Script: env");
echo json_encode([
  "server" => $s,
  "get" => $_GET,
  "post" => $_POST,
  "input" => file_get_contents("php://input"),
]);
`;

/** `n` bytes of a repeating pattern, flushed in 64 KiB pieces (a streamed response). */
export const BIG_PHP = `<?php
$n = (int)($_GET["n"] ?? 0);
header("Content-Type: application/octet-stream");
$block = str_repeat("0123456789abcdef", 4096);
while ($n > 0) {
  $part = substr($block, 0, min($n, strlen($block)));
  echo $part;
  flush();
  $n -= strlen($part);
}
`;

/** Writes to the FastCGI stderr stream (error_log), then answers with status `s`. */
export const STDERR_PHP = `<?php
error_log("message from php: " . ($_GET["m"] ?? ""));
http_response_code((int)($_GET["s"] ?? 200));
echo "done";
`;

/** Sleeps `ms` milliseconds before answering. */
export const SLOW_PHP = `<?php
usleep((int)($_GET["ms"] ?? 0) * 1000);
echo "late";
`;

/** Leaves a marker file when it runs (to prove a refused request never reached php-fpm). */
export const MARK_PHP = `<?php
file_put_contents(__DIR__ . "/ran-" . preg_replace("/[^a-z0-9]/", "", $_GET["id"] ?? "x"), "1");
echo strlen(file_get_contents("php://input"));
`;

/** The scripts, by path under the document root. */
export const SCRIPTS: Record<string, string> = {
  "env.php": ENV_PHP,
  "big.php": BIG_PHP,
  "stderr.php": STDERR_PHP,
  "slow.php": SLOW_PHP,
  "mark.php": MARK_PHP,
  "sub/index.php": `<?php echo "sub index " . $_SERVER["SCRIPT_NAME"];`,
  "index.php":
    `<?php echo "front controller " . $_SERVER["SCRIPT_NAME"] . " " . $_SERVER["REQUEST_URI"];`,
  "static.txt": "plain file\n",
};

/** The JSON env.php answers with. */
export interface EnvAnswer {
  server: Record<string, string>;
  get: Record<string, string>;
  post: Record<string, string>;
  input: string;
}
