/** The running program when it is the self-contained executable (bun): the binary the installer copies; undefined under the Node build. */
export const selfExecutable = (): string | undefined => (process.versions['bun'] === undefined ? undefined : process.execPath);
