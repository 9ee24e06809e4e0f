import { parseAllDocuments, type YAMLError } from 'yaml';

/** A manifest file that cannot be read as YAML or JSON: the file, the 1-based line and why. */
export class ManifestSyntaxError extends Error {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
  constructor(file: string, line: number, reason: string) {
    super(`${file} line ${line}: ${reason}`);
    this.name = 'ManifestSyntaxError';
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** One document of a manifest file, as plain data, and the line it starts on. */
export interface ManifestDocument {
  readonly file: string;
  readonly line: number;
  readonly value: unknown;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? message).trim();
}

function syntaxError(file: string, text: string, err: YAMLError): ManifestSyntaxError {
  const line = err.linePos?.[0]?.line ?? lineOf(text, err.pos[0]);
  // yaml's messages end with "at line N, column M"; the line is ours to print.
  return new ManifestSyntaxError(file, line, firstLine(err.message).replace(/ at line \d+, column \d+:?$/, ''));
}

/** A self-referencing alias (`a: &x [*x]`) makes a circular value, which no Kubernetes object can be. */
function isCircular(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return false;
  } catch {
    return true;
  }
}

/**
 * Parses a YAML or JSON file (any number of `---` separated documents) into plain values. Anchors and aliases
 * are resolved with yaml's alias limit (no "billion laughs"); the first syntax error throws, naming the line.
 */
export function parseManifestText(file: string, text: string): ManifestDocument[] {
  const docs = parseAllDocuments(text, { prettyErrors: true, strict: true, uniqueKeys: true, logLevel: 'error' });
  // An empty stream is an empty list (yaml's EmptyStream).
  const list = [...docs];
  const out: ManifestDocument[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err !== undefined) throw syntaxError(file, text, err);
    const line = lineOf(text, doc.range[0]);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new ManifestSyntaxError(file, line, firstLine(e instanceof Error ? e.message : String(e)));
    }
    if (isCircular(value)) throw new ManifestSyntaxError(file, line, 'an alias refers to a node that contains it');
    if (value !== null && value !== undefined) out.push({ file, line, value });
  }
  return out;
}
