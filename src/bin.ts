import { basename } from 'node:path';
import { answerFront } from '../cni/front.js';

/**
 * The self-contained executable: one binary for both programs (busybox-style), chosen by the name it was
 * started under — `meshcap` / `istio-iptables`, or `meshcap-cni` — or, under any other name, by the CNI
 * environment a runtime always sets. One binary instead of two halves the image and the node's disk.
 *
 * Each program is an entry of its own inside the binary (scripts/build-bin.mjs embeds cni/plugin.js and
 * src/main.js beside this one) and only the one needed is loaded: Bun's start-up grows with the size of the
 * entry it runs, so this dispatcher stays small — it holds only the plugin's front (VERSION, a pass-through
 * of a validated entry: cni/front.ts) — and the plugin never pays for the CLI's graph (trace, graph
 * rendering, the node agent's gRPC).
 */

/** Where `bun build --compile` keeps the embedded entries (its virtual file system, named from the project root). */
const EMBEDDED = '/$bunfs/root';

// Paths the bundler cannot resolve, so it leaves each entry where it is instead of inlining it here.
const load = <T>(entry: string): T => require(`${EMBEDDED}/${entry}`) as T;

const name = basename(process.argv0);
const isPlugin = name.startsWith('meshcap-cni') || (process.env['CNI_COMMAND'] !== undefined && name !== 'meshcap' && name !== 'istio-iptables');
if (isPlugin) {
  const front = answerFront();
  if (!front.answered) load<typeof import('../cni/plugin.js')>('cni/plugin.js').runPlugin(front.stdin);
} else {
  load('src/main.js');
}
