import { pino, type Level, type Logger } from 'pino';
import { fdSink } from './fd-sink.js';

export type { Logger } from 'pino';
export type LogFormat = 'json' | 'pretty';
export type LogLevel = Level | 'silent';

const ISTIO_TO_PINO: Record<string, LogLevel> = { debug: 'debug', info: 'info', warn: 'warn', error: 'error', fatal: 'fatal', none: 'silent' };

/** Maps Istio's `--log_output_level` level names onto pino's. */
export function levelFromIstio(level: string): LogLevel {
  return ISTIO_TO_PINO[level] ?? 'info';
}

export interface LogSink {
  write(chunk: string): unknown;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One human line per record: `INFO  msg key=value …`. */
function prettySink(out: LogSink): LogSink {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n').filter(Boolean)) {
        const { level, msg, time: _t, pid: _p, hostname: _h, name: _n, ...rest } = JSON.parse(line) as Record<string, unknown>;
        const fields = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
        out.write(`${(LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5)} ${String(msg)}${fields.length ? ` ${fields.join(' ')}` : ''}\n`);
      }
    },
  };
}

/**
 * The one logger of a process: JSON lines on stderr (or `sink`), or a readable line each with `pretty`.
 * Always through a sink of meshcap's own (src/fd-sink.ts): pino's destination writer is not bundled.
 */
export function createLogger(opts: { level: LogLevel; format: LogFormat; sink?: LogSink; name?: string }): Logger {
  const sink = opts.sink ?? fdSink(2);
  return pino(
    { level: opts.level, name: opts.name ?? 'meshcap', base: null, timestamp: pino.stdTimeFunctions.isoTime },
    opts.format === 'pretty' ? prettySink(sink) : sink,
  );
}
