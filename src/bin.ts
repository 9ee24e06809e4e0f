import { basename } from 'node:path';
import { answerVersion } from '../cni/version.js';

/**
 * The self-contained executable: one binary for both programs (busybox-style), chosen by the name it was
 * started under — `meshcap` / `istio-iptables`, or `meshcap-cni` — or, under any other name, by the CNI
 * environment a runtime always sets. One binary instead of two halves the image and the node's disk.
 *
 * Each program is an entry of its own inside the binary (scripts/build-bin.mjs embeds cni/main.js and
 * src/main.js beside this one) and only the one started is loaded: Bun's start-up grows with the size of the
 * entry it runs, so this dispatcher stays tiny, answers the plugin's VERSION itself, and the plugin never
 * pays for the CLI's graph (trace, graph rendering, the node agent's gRPC).
 */
const name = basename(process.argv0);
const isPlugin = name.startsWith('meshcap-cni') || (process.env['CNI_COMMAND'] !== undefined && name !== 'meshcap' && name !== 'istio-iptables');
if (!(isPlugin && answerVersion())) {
  // Where `bun build --compile` keeps the embedded entries (its virtual file system, named from the project
  // root); a path the bundler cannot resolve, so it leaves each entry where it is instead of inlining it here.
  const entry = `/$bunfs/root/${isPlugin ? 'cni' : 'src'}/main.js`;
  require(entry);
}
