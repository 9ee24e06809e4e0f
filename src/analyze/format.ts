import type { Finding, Severity } from './findings.js';

const LEVEL: Readonly<Record<Severity, string>> = { error: 'Error', warning: 'Warning', info: 'Info' };

function originOf(f: Finding, fallback: string): string {
  if (f.kind === undefined) return fallback;
  const who = `${f.kind} ${f.name ?? ''}`.trim();
  return f.container === undefined ? who : `${who}, container ${f.container}`;
}

/** Manifest text is untrusted: control characters (newlines, terminal escapes) are shown escaped, one finding per line. */
function escapeControls(line: string): string {
  // eslint-disable-next-line no-control-regex
  return line.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * istioctl-style lines, `Error [MCL001] (Deployment web, container app) message`, then one summary line.
 * `origin` names what a finding without a workload is about (precheck: the namespace).
 */
export function formatFindings(findings: readonly Finding[], origin: string): string {
  const lines = findings.map((f) => escapeControls(`${LEVEL[f.severity]} [${f.code}] (${originOf(f, origin)}) ${f.message}`));
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length;
  const summary = findings.length === 0 ? 'no findings' : `${plural(findings.length, 'finding')}: ${plural(count('error'), 'error')}, ${plural(count('warning'), 'warning')}, ${count('info')} info`;
  return [...lines, summary].join('\n') + '\n';
}

/** `{"findings": [{code, severity, message, ...where}]}` */
export function formatFindingsJson(findings: readonly Finding[]): string {
  return `${JSON.stringify({ findings }, null, 2)}\n`;
}
