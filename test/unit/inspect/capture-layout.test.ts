import { describe, expect, it } from 'vitest';
import { detectLayout } from '../../../src/inspect/capture-layout.js';
import { parseSaveText } from '../../../src/inspect/save-text.js';
import { renderSaveFamily } from '../../../src/render/save.js';
import { ISTIO_INIT_ARGS, planFor } from '../../helpers/plan.js';

const layoutOf = (text: string) => detectLayout(parseSaveText(text, 'ipv4').tables);
const layoutFor = (argv: readonly string[]) => layoutOf(`${renderSaveFamily(planFor(argv), 'ipv4').join('\n')}\n`);

describe('telling the capture layout from the rules', () => {
  it("names meshcap's own layouts: sidecar (both modes), ambient in-pod (both inbound modes), ambient's node rules", () => {
    expect(layoutFor([...ISTIO_INIT_ARGS])).toBe('sidecar');
    expect(layoutFor(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'TPROXY', '-b', '*'])).toBe('sidecar');
    expect(layoutFor(['ambient', '--inbound', 'redirect'])).toBe('ambient');
    expect(layoutFor(['ambient', '--inbound', 'tproxy'])).toBe('ambient');
    expect(layoutFor(['ambient-host'])).toBe('ambient-host');
  });

  it("counts ztunnel's mark 0x539/0xfff as ambient without ISTIO_PRERT, but not in an ownership record or with another mask", () => {
    expect(layoutOf('*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m mark ! --mark 0x539/0xfff -j RETURN\nCOMMIT\n')).toBe('ambient');
    expect(layoutOf('*nat\n:ISTIO_OWNED_OUTPUT - [0:0]\n-A ISTIO_OWNED_OUTPUT -m mark --mark 0x539/0xfff -j RETURN\nCOMMIT\n')).toBe('sidecar');
    expect(layoutOf('*mangle\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -m mark --mark 0x539 -j RETURN\nCOMMIT\n')).toBe('sidecar');
  });

  it('counts an ISTIO_PRERT chain in any table, even empty', () => {
    expect(layoutOf('*nat\n:ISTIO_PRERT - [0:0]\nCOMMIT\n')).toBe('ambient');
  });
});
