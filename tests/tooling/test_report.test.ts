/** scripts/test_report.ts reads the JUnit report that `.ci/run` prints ignored tests from. */
import assert from "node:assert/strict";
import { fileTimes, parseJunit } from "../../scripts/test_report.ts";

// As `deno test --junit-path` writes it: a test with steps, an ignored test and step, a failure.
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="6" failures="1" errors="0" time="2.500">
    <testsuite name="./tests/a.test.ts" tests="5" disabled="2" errors="0" failures="1">
        <testcase name="ign &quot;x&quot;" classname="./tests/a.test.ts" time="0.000" line="1" col="6">
            <skipped/>
        </testcase>
        <testcase name="steps" classname="./tests/a.test.ts" time="1.500" line="2" col="6">
        </testcase>
        <testcase name="fail" classname="./tests/a.test.ts" time="0.250" line="3" col="6">
            <failure message="Uncaught Error: x">Error: x</failure>
        </testcase>
        <testcase name="steps &gt; a" classname="./tests/a.test.ts" time="1.000" line="2" col="43">
        </testcase>
        <testcase name="steps &gt; b" classname="./tests/a.test.ts" time="0.000" line="2" col="72">
            <skipped/>
        </testcase>
    </testsuite>
    <testsuite name="./tests/b.test.ts" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="a &gt; b without a parent" classname="./tests/b.test.ts" time="2.000" line="1" col="6">
        </testcase>
    </testsuite>
</testsuites>`;

Deno.test("test_report: ignored tests and steps by name, failures marked", () => {
  const cases = parseJunit(XML);
  assert.equal(cases.length, 6);
  assert.deepEqual(
    cases.filter((c) => c.ignored).map((c) => `${c.file}: ${c.name}`),
    [
      './tests/a.test.ts: ign "x"',
      "./tests/a.test.ts: steps > b",
    ],
  );
  assert.deepEqual(cases.filter((c) => c.failed).map((c) => c.name), ["fail"]);
});

Deno.test("test_report: a file's time sums its tests, not their steps again", () => {
  assert.deepEqual(fileTimes(parseJunit(XML)), [
    ["./tests/b.test.ts", 2],
    ["./tests/a.test.ts", 1.75],
  ]);
});
