import { statSync, unlinkSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withNamespaceLock } from '../../../src/exec/lock.js';

describe('withNamespaceLock', () => {
  it('runs holders of one namespace one after another', async () => {
    const order: string[] = [];
    const hold = (name: string) =>
      withNamespaceLock(undefined, 5_000, async () => {
        order.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 50));
        order.push(`${name} out`);
      });
    await Promise.all([hold('a'), hold('b'), hold('c')]);
    for (let i = 0; i < order.length; i += 2) expect(order[i]?.replace(' in', '')).toBe(order[i + 1]?.replace(' out', ''));
  });

  it('takes over a lock whose owner is gone', async () => {
    const st = statSync('/proc/self/ns/net');
    writeFileSync(`/run/meshcap/netns-${st.dev}-${st.ino}.lock`, '999999999');
    await expect(withNamespaceLock(undefined, 1_000, async () => 'ran')).resolves.toBe('ran');
  });

  it('gives up with a clear error when a live owner keeps it', async () => {
    const st = statSync('/proc/self/ns/net');
    writeFileSync(`/run/meshcap/netns-${st.dev}-${st.ino}.lock`, String(process.ppid));
    await expect(withNamespaceLock(undefined, 200, async () => 'ran')).rejects.toThrow(/holds the lock for this namespace/);
    unlinkSync(`/run/meshcap/netns-${st.dev}-${st.ino}.lock`);
  });
});
