/**
 * Reads the JUnit report of `deno test --junit-path=<file>` and prints the ignored tests by
 * name, then the slowest test files: each file's time is the sum of its tests' (steps are
 * counted within their test), so what the file itself costs, whatever ran beside it.
 *
 * ```sh
 * deno task test --junit-path=/tmp/junit.xml
 * deno run -R --config tests/deno.json scripts/test_report.ts /tmp/junit.xml 15
 * ```
 *
 * @module
 */

/** One `<testcase>` of the report. */
export interface TestCase {
  file: string;
  name: string;
  seconds: number;
  ignored: boolean;
  failed: boolean;
}

const ENTITIES: Record<string, string> = {
  "&quot;": '"',
  "&apos;": "'",
  "&lt;": "<",
  "&gt;": ">",
  "&amp;": "&",
};

function decode(s: string): string {
  return s.replace(/&(?:quot|apos|lt|gt|amp);/g, (e) => ENTITIES[e]);
}

function attribute(tag: string, name: string): string {
  const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`));
  return m ? decode(m[1]) : "";
}

/** The test cases of a Deno JUnit report (tests and steps alike; steps are `test > step`). */
export function parseJunit(xml: string): TestCase[] {
  const out: TestCase[] = [];
  for (
    const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)
  ) {
    const body = m[3] ?? "";
    out.push({
      file: attribute(m[1], "classname"),
      name: attribute(m[1], "name"),
      seconds: Number(attribute(m[1], "time")) || 0,
      ignored: /<skipped\b/.test(body),
      failed: /<(failure|error)\b/.test(body),
    });
  }
  return out;
}

/** Seconds per file, summing top-level tests only (a step's time is within its test's). */
export function fileTimes(cases: TestCase[]): [string, number][] {
  const names = new Map<string, Set<string>>();
  for (const c of cases) {
    names.set(c.file, (names.get(c.file) ?? new Set()).add(c.name));
  }
  const isStep = (c: TestCase) => {
    const parts = c.name.split(" > ");
    for (let i = 1; i < parts.length; i++) {
      if (names.get(c.file)!.has(parts.slice(0, i).join(" > "))) return true;
    }
    return false;
  };
  const totals = new Map<string, number>();
  for (const c of cases) {
    if (!isStep(c)) totals.set(c.file, (totals.get(c.file) ?? 0) + c.seconds);
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

if (import.meta.main) {
  const [path, count = "15"] = Deno.args;
  if (!path) {
    console.error(
      "usage: test_report.ts <junit.xml> [number of slowest files]",
    );
    Deno.exit(2);
  }
  const cases = parseJunit(await Deno.readTextFile(path));
  const ignored = cases.filter((c) => c.ignored);
  console.log(`ignored tests: ${ignored.length}`);
  for (const c of ignored) console.log(`  ${c.file}: ${c.name}`);
  console.log(
    `slowest test files (of ${new Set(cases.map((c) => c.file)).size}):`,
  );
  for (const [file, seconds] of fileTimes(cases).slice(0, Number(count))) {
    console.log(`  ${seconds.toFixed(1).padStart(7)}s  ${file}`);
  }
}
