import { describe, expect, it } from 'vitest';
import { CommandError, reasonOf } from '../../src/errors.js';

/** Real stderr of the tools, captured on Debian bookworm (iptables 1.8.9, nftables 1.0.6). */
describe('reasonOf', () => {
  it("names iptables-nft-restore's reason, printed on the line after its banner", () => {
    const stderr = 'iptables-nft-restore v1.8.9 (nf_tables): \nline 4: RULE_APPEND failed (Invalid argument): rule in chain ISTIO_OUTPUT\n';
    expect(reasonOf(stderr)).toBe('line 4: RULE_APPEND failed (Invalid argument): rule in chain ISTIO_OUTPUT');
  });

  it('keeps every line that says why and drops the usage hint', () => {
    const stderr = "iptables-nft-restore v1.8.9 (nf_tables): Chain 'NOPE' does not exist\nError occurred at line: 3\nTry `iptables-nft-restore -h' or 'iptables-nft-restore --help' for more information.\n";
    expect(reasonOf(stderr)).toBe("Chain 'NOPE' does not exist; Error occurred at line: 3");
  });

  it("keeps nft's Error: lines, not the echoed input and its carets", () => {
    const stderr = '/dev/stdin:1:15-15: Error: Could not process rule: No such file or directory\nadd rule inet x y ip daddr 1.2.3.4 accept\n              ^\n';
    expect(reasonOf(stderr)).toBe('/dev/stdin:1:15-15: Error: Could not process rule: No such file or directory');
  });

  it('keeps a one-line message as it is', () => {
    expect(reasonOf('iptables-restore: line 5 failed\n')).toBe('iptables-restore: line 5 failed');
    expect(reasonOf('Fatal: can\'t open lock file /run/xtables.lock: Permission denied\n')).toBe("Fatal: can't open lock file /run/xtables.lock: Permission denied");
  });

  it('is what a CommandError reports', () => {
    const err = new CommandError({ command: 'iptables-nft-restore --noflush', exitCode: 4, stderr: 'iptables-nft-restore v1.8.9 (nf_tables): \nline 4: RULE_APPEND failed (Invalid argument): rule in chain ISTIO_OUTPUT\n' });
    expect(err.message).toBe('iptables-nft-restore --noflush failed (exit 4): line 4: RULE_APPEND failed (Invalid argument): rule in chain ISTIO_OUTPUT');
  });
});
