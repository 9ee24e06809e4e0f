import { answerFront } from './front.js';
import { runPlugin } from './plugin.js';

/**
 * The `meshcap-cni` program of the Node build: a chained CNI plugin. What cni/front.ts answers (VERSION, a
 * pass-through of a validated entry) never loads the rest; every other call runs the full path. (No
 * top-level await: bytecode builds are CJS. The executable starts at src/bin.ts instead.)
 */
const front = answerFront();
if (!front.answered) runPlugin(front.stdin);
