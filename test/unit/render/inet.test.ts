import { describe, expect, it } from 'vitest';
import { cidr, isLoopbackCidr, parseCidr, parseHostAddress } from '../../../src/model/cidr.js';
import { formatAddress, formatCanonicalCidr } from '../../../src/render/inet.js';

describe('formatCanonicalCidr spells prefixes as iptables-save prints them', () => {
  it.each([
    ['10.1.2.3/8', '10.0.0.0/8'],
    ['127.0.0.1/8', '127.0.0.0/8'],
    ['9.9.0.0/16', '9.9.0.0/16'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['2001:DB8:0:0:1::5/64', '2001:db8::/64'],
    ['::127.0.0.53/128', '::127.0.0.53/128'],
    ['::ffff:1.2.3.4/128', '::ffff:1.2.3.4/128'],
    ['2001:0:0:1::1/128', '2001:0:0:1::1/128'],
    ['::1/128', '::1/128'],
    ['::/0', '::/0'],
    ['1:0:0:0:0:0:0:1/128', '1::1/128'],
    ['1:2:3:4:5:6:7:8/128', '1:2:3:4:5:6:7:8/128'],
    ['1:0:2:3:4:5:6:7/128', '1:0:2:3:4:5:6:7/128'],
    ['1:2:3:4:5:6:0:0/128', '1:2:3:4:5:6::/128'],
    ['::6/128', '::6/128'],
    ['64:ff9b::1.2.3.4/128', '64:ff9b::102:304/128'],
  ])('%s → %s', (input, expected) => {
    expect(formatCanonicalCidr(cidr(input))).toBe(expected);
  });

  it('keeps the spelling the user gave for Istio output', () => {
    expect(cidr('2001:DB8::1/32').text).toBe('2001:DB8::1/32');
  });

  it('formats IPv4 bytes dotted', () => {
    expect(formatAddress([192, 0, 2, 1])).toBe('192.0.2.1');
  });
});

describe('parseCidr', () => {
  it.each(['10.0.0.0', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.256/8', '1.2.3/8', '01.2.3.4/8', '::1/129', '::g/64', 'fe80::1%lo/64', ' 10.0.0.0/8', '10.0.0.0/08', '::1.2.3/128'])(
    'rejects %j',
    (s) => {
      expect(parseCidr(s).ok).toBe(false);
    },
  );

  it('reads host addresses as /32 and /128', () => {
    const v4 = parseHostAddress('192.0.2.53');
    const v6 = parseHostAddress('2001:db8::53');
    expect(v4.ok && v4.value.text).toBe('192.0.2.53/32');
    expect(v6.ok && v6.value.text).toBe('2001:db8::53/128');
  });

  it('judges loopback on the address as given, as Go does', () => {
    expect(isLoopbackCidr(cidr('127.1.2.3/32'))).toBe(true);
    expect(isLoopbackCidr(cidr('127.0.0.1/0'))).toBe(true);
    expect(isLoopbackCidr(cidr('::1/128'))).toBe(true);
    expect(isLoopbackCidr(cidr('10.0.0.0/8'))).toBe(false);
    expect(isLoopbackCidr(cidr('::/0'))).toBe(false);
  });
});

describe('the save format of a /0 prefix', () => {
  it('prints no address match, as the kernel keeps none (found by the property suite)', async () => {
    const { planFor } = await import('../../helpers/plan.js');
    const { renderSaveFamily } = await import('../../../src/render/save.js');
    const plan = planFor(['-x', '10.1.2.3/0,::/0', '-i', '', '--ipv6', 'on']);
    expect(renderSaveFamily(plan, 'ipv4')).toContain('-A ISTIO_OUTPUT -j RETURN');
    expect(renderSaveFamily(plan, 'ipv6')).toContain('-A ISTIO_OUTPUT -j RETURN');
    expect(renderSaveFamily(plan, 'ipv4').join('\n')).not.toContain('0.0.0.0/0');
  });
});
