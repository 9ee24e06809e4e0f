import { basename } from 'node:path';

/**
 * The self-contained executable: one binary for both programs (busybox-style), chosen by the name it was
 * started under — `meshcap` / `istio-iptables`, or `meshcap-cni` — or, under any other name, by the CNI
 * environment a runtime always sets. One binary instead of two halves the image and the node's disk.
 */
const name = basename(process.argv0);
const isPlugin = name.startsWith('meshcap-cni') || (process.env['CNI_COMMAND'] !== undefined && name !== 'meshcap' && name !== 'istio-iptables');
if (isPlugin) require('../cni/main.js');
else require('./main.js');
