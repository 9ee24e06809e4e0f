// Prints vitest's JSON report as one closing line CI can read: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test-results.json';
const report = JSON.parse(readFileSync(file, 'utf8'));
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
process.exitCode = report.numFailedTests > 0 || report.numTotalTests === 0 || !report.success ? 1 : 0;
