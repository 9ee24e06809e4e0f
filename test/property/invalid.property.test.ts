import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { expectConfigError } from '../helpers/errors.js';
import { SCALE, SEED } from './arbitraries.js';

/**
 * Random invalid input, through flags and env vars: always exit 2 with one stderr line naming the field and
 * no stack trace, and never a command run (the in-process runner records any attempt), so never a partial
 * apply. The runs are real applies (no -n), which is what makes "nothing ran" meaningful.
 */
const badPort = fc.constantFrom('0', '65536', '1e3', '-1', '080', '', ' 80', '80 ', '8o', '99999999999', '0x50', '+80', '1.5');
/** In a list, Istio accepts port 0 and spaces around an item (iptables-restore drops them); meshcap does too. */
const badListPort = badPort.filter((p) => !['0', ' 80', '80 ', ''].includes(p));
const badCidr = fc.constantFrom('10.0.0.0/33', '10.0.0/8', '10.0.0.0', '256.0.0.0/8', '10.0.0.0/8x', '::g/64', 'fe80::1%eth0/64', '1.2.3.4/-1', '10.0.0.0/ 8', '*,10.0.0.0/8', 'a.b.c.d/8');
const badIface = fc.oneof(
  fc.constantFrom('eth 0', 'eth0\n', 'eth0\n-A OUTPUT -j ACCEPT', '!eth0', 'eth/0', 'eth0:1', 'averyveryverylongif', '-A', '.', '..', 'eth0"', "eth0'", 'eth0;'),
  // Items are trimmed (as iptables-restore's tokenizer does for Istio): too long even after trimming.
  fc.string({ minLength: 16, maxLength: 40 }).filter((s) => !s.includes(',') && Buffer.byteLength(s.trim()) > 15),
);
const badId = fc.constantFrom('4294967295', '4294967296', '-1', 'root', '1337 ', '1e3', '');
const badMode = fc.constantFrom('tproxy', 'redirect', 'TPROXY ', 'NAT', 'REDIRECT\n');
const badBool = fc.constantFrom('yes', 'no', 'on', 'off', '2', 'TRUE ', 'tRuE');

/** [flag, env var, field label, bad values]: the field as the error must name it. */
const FIELDS: [string, string | undefined, fc.Arbitrary<string>][] = [
  ['--envoy-port', undefined, badPort],
  ['--inbound-capture-port', 'INBOUND_CAPTURE_PORT', badPort],
  ['--istio-inbound-ports', 'ISTIO_INBOUND_PORTS', badListPort],
  ['--istio-local-exclude-ports', 'ISTIO_LOCAL_EXCLUDE_PORTS', badListPort],
  ['--istio-service-cidr', 'ISTIO_SERVICE_CIDR', badCidr],
  ['--istio-service-exclude-cidr', 'ISTIO_SERVICE_EXCLUDE_CIDR', badCidr],
  ['--istio-exclude-interfaces', 'ISTIO_EXCLUDE_INTERFACES', badIface],
  ['--kube-virt-interfaces', 'KUBE_VIRT_INTERFACES', badIface],
  ['--proxy-uid', 'PROXY_UID', badId.filter((v) => v !== '')],
  ['--proxy-gid', 'PROXY_GID', badId.filter((v) => v !== '')],
  ['--istio-inbound-interception-mode', 'ISTIO_INBOUND_INTERCEPTION_MODE', badMode],
  ['--redirect-dns', 'REDIRECT_DNS', badBool],
  ['--istio-inbound-tproxy-mark', 'ISTIO_INBOUND_TPROXY_MARK', fc.constantFrom('0', '1338', '0x539', '-5', '4294967296')],
];

const BASE: Record<string, string> = {
  '--envoy-port': '15001',
  '--inbound-capture-port': '15006',
  '--proxy-uid': '1337',
  '--istio-service-cidr': '*',
  '--istio-inbound-ports': '*',
  '--istio-local-exclude-ports': '15090,15021,15020',
};

export const invalidFigures = { tried: 0 };

describe(`property: random invalid input exits 2 naming the field (seed ${SEED})`, () => {
  it(`${Math.round(1500 * SCALE)} random invalid inputs`, { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: FIELDS.length - 1 }), fc.boolean(), fc.string(), async (i, viaEnv, _salt) => {
        const [flag, env, bad] = FIELDS[i]!;
        const value = fc.sample(bad, { numRuns: 1, seed: SEED + i + _salt.length })[0]!;
        const useEnv = viaEnv && env !== undefined;
        // A valid istio-init command line, without the field under test (a flag would beat its env var).
        const base = Object.entries(BASE).filter(([f]) => f !== flag).flatMap(([f, v]) => [`${f}=${v}`]);
        const argv = [...base, '--ipv6', 'off', ...(useEnv ? [] : [`${flag}=${value}`])];
        const res = await runCli(argv, useEnv ? { [env]: value } : {});
        invalidFigures.tried++;
        expect(res.commands).toEqual([]);
        expectConfigError(res, useEnv ? `env ${env}` : flag, JSON.stringify(value));
      }),
      { seed: SEED, numRuns: Math.round(1500 * SCALE) },
    );
    console.log(`invalid inputs tried: ${invalidFigures.tried}`);
  });
});
