/** What precheck and lint report: one finding, its severity, and where it applies. */

export type Severity = 'error' | 'warning' | 'info';

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, error: 2 };

export interface Finding {
  readonly code: string;
  readonly severity: Severity;
  readonly message: string;
  /** lint: the manifest file, the workload kind and name, the container. */
  readonly file?: string;
  /** lint: the line the workload's document starts on. */
  readonly line?: number;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly container?: string;
  /** precheck: the port, pid, address or rule the finding is about. */
  readonly port?: number;
  readonly pid?: number;
}

/** Whether any finding is at or above `threshold`. */
export function reachesThreshold(findings: readonly Finding[], threshold: Severity): boolean {
  return findings.some((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold]);
}
