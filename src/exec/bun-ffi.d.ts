/** bun:ffi exists only inside Bun; src/exec/native.ts declares the little of it that it uses. */
declare module 'bun:ffi';
