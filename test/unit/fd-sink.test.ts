import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

/**
 * src/fd-sink.ts against a real full pipe: the writer's end is non-blocking (as a runtime may hand a plugin
 * its stdout) and the reader drains slowly, so writes meet EAGAIN; every byte must still arrive, in order.
 * And a reader that goes away (EPIPE) ends the output quietly with exit 0. Driven by python3 (pipe2, fcntl),
 * the sink run by the Bun build tool on the source.
 */
const BUN = join(REPO_ROOT, 'node_modules', '.bin', 'bun');
const WRITER = `import { fdSink } from ${JSON.stringify(join(REPO_ROOT, 'src', 'fd-sink.ts'))}; const out = fdSink(1); for (let i = 0; i < 400; i++) out.write(String(i).padStart(6, '0') + 'x'.repeat(4089) + '\\n');`;

const DRIVER = `
import os, fcntl, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen([sys.argv[1], '-e', sys.argv[2]], stdout=w)
os.close(w)
mode = sys.argv[3]
data = b''
if mode == 'slow':
    while True:
        time.sleep(0.002)
        chunk = os.read(r, 16384)
        if not chunk:
            break
        data += chunk
else:
    data = os.read(r, 100)
    os.close(r)
code = p.wait()
ordered = all(data[i * 4096:i * 4096 + 6] == str(i).zfill(6).encode() for i in range(len(data) // 4096))
print(code, len(data), data[:6].decode(), 'ordered' if mode == 'slow' and ordered else '')
`;

describe('fdSink', () => {
  it('delivers every byte, in order, through a non-blocking pipe a slow reader drains', () => {
    const out = execFileSync('python3', ['-c', DRIVER, BUN, WRITER, 'slow'], { encoding: 'utf8' }).trim();
    expect(out).toBe(`0 ${400 * 4096} 000000 ordered`);
  });

  it('ends quietly, exit 0, when the reader goes away', () => {
    const out = execFileSync('python3', ['-c', DRIVER, BUN, WRITER, 'gone'], { encoding: 'utf8' }).trim();
    expect(out).toBe('0 100 000000');
  });
});
