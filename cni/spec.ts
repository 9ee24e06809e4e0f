/**
 * The CNI spec's versions, errors and result conversion (SPEC.md 1.1.0; reference §11). Pure.
 */
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];
export const LATEST: CniVersion = '1.1.0';

export const CniCode = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  invalidEnv: 4,
  ioFailure: 5,
  decodeFailure: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  notAvailable: 50,
  /** meshcap's own codes (≥ 100). */
  applyFailed: 100,
  checkFailed: 101,
  environment: 102,
  /** The pod carries an annotation the plugin config's bypass_policy denies. */
  policyDenied: 103,
  internal: 999,
} as const;

/** A CNI error, printed as JSON on stdout with a non-zero exit. */
export class CniError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly details?: string,
  ) {
    super(msg);
    this.name = 'CniError';
  }

  toJSON(cniVersion: string): Record<string, unknown> {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export function isSupported(v: string): v is CniVersion {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

export function atLeast(v: CniVersion, min: CniVersion): boolean {
  return SUPPORTED_VERSIONS.indexOf(v) >= SUPPORTED_VERSIONS.indexOf(min);
}

type Json = Record<string, unknown>;
/** A JSON object (not null, not an array). */
export const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Converts a result between spec versions, as libcni does when it passes prevResult through: 0.3.x/0.4.0
 * IPs carry `"version": "4"|"6"`, 1.x IPs do not; 0.x results always print `dns`, 1.x omits an empty one.
 * Every other key is kept as it came.
 */
export function convertResult(result: Json, to: CniVersion): Json {
  const ips = Array.isArray(result['ips']) ? (result['ips'] as unknown[]) : undefined;
  const legacy = !to.startsWith('1.');
  const convertedIps = ips?.map((ip) => {
    if (!isObject(ip)) return ip;
    const { version: _v, ...rest } = ip;
    const address = typeof ip['address'] === 'string' ? ip['address'] : '';
    return legacy ? { ...rest, version: address.includes(':') ? '6' : '4' } : rest;
  });
  const out: Json = { ...result, cniVersion: to, ...(convertedIps ? { ips: convertedIps } : {}) };
  const dns = out['dns'];
  if (legacy) out['dns'] = isObject(dns) ? dns : {};
  else if (isObject(dns) && Object.keys(dns).length === 0) delete out['dns'];
  return out;
}

/** The addresses (without prefix length) of a result's `ips`. */
export function resultAddresses(result: Json | undefined): string[] {
  const ips = result && Array.isArray(result['ips']) ? (result['ips'] as unknown[]) : [];
  return ips.flatMap((ip) => (isObject(ip) && typeof ip['address'] === 'string' ? [ip['address'].split('/')[0] ?? ''] : [])).filter(Boolean);
}

/** A CNI result or error as the plugin prints it on stdout. */
export const print = (obj: unknown) => `${JSON.stringify(obj, null, 4)}\n`;

/** VERSION's answer: the versions meshcap speaks, under the version asked for when it is one of them. */
export function versionReply(stdin: string): string {
  let requested: unknown;
  try {
    requested = (JSON.parse(stdin || '{}') as { cniVersion?: unknown }).cniVersion;
  } catch {
    requested = undefined;
  }
  const cniVersion = typeof requested === 'string' && isSupported(requested) ? requested : LATEST;
  return `${JSON.stringify({ cniVersion, supportedVersions: SUPPORTED_VERSIONS })}\n`;
}
