// Prints the transaction `meshcap --native-nftables` pipes to `nft -f -` into a fresh pod for the argv given (the
// bare-nft floor): the probe found none of our tables, so nothing is deleted; pod modes list the chains at the end.
import { buildProgram } from '../src/cli/program.js';
import { loadCommand } from '../src/commands/load.js';
import { nodeHost } from '../src/config/host.js';
import { renderNftApply } from '../src/render/nft-apply.js';
import { buildNftTables } from '../src/render/nft-transaction.js';

const parsed = buildProgram({ out: () => undefined, err: () => undefined }).parse(process.argv.slice(2));
if (parsed === undefined || !('check' in parsed)) throw new Error('give a sidecar, ambient or ambient-host command line');
const loaded = loadCommand(parsed.command, parsed.flags, process.env, nodeHost);
if (loaded.nft === undefined) throw new Error('give --native-nftables');
const listChains = loaded.nft.mode === 'ambient-host' ? '' : 'list chains\n';
process.stdout.write(renderNftApply(loaded.nft.mode, loaded.plan, buildNftTables(loaded.plan, loaded.nft), new Set()) + listChains);
