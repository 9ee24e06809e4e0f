// Prints vitest JSON reports as one closing line CI can read: "N passed, N failed, N skipped".
import { existsSync, readFileSync } from 'node:fs';

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['test-results.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
let ok = true;
for (const file of files) {
  if (!existsSync(file)) {
    console.error(`no test report at ${file}`);
    ok = false;
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  // A suite that failed before its tests ran (a broken beforeAll) counts as failed, not as skipped tests.
  failed += Math.max(report.numFailedTests, report.numFailedTestSuites);
  skipped += report.numPendingTests + report.numTodoTests;
  if (report.numPendingTests > 0) ok = false;
  ok &&= report.success && report.numTotalTests > 0;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = ok && failed === 0 ? 0 : 1;
