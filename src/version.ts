/**
 * meshcap's version: package.json's, baked in at build time (esbuild and bun `define` the identifier;
 * vitest's config does the same for the unit tests), so the executable needs no package.json beside it.
 */
declare const __MESHCAP_VERSION__: string | undefined;

export const VERSION: string = typeof __MESHCAP_VERSION__ === 'string' ? __MESHCAP_VERSION__ : '0.0.0-dev';
