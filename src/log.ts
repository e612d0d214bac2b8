import { openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { ConfigError } from './errors.js';
import { createFolders, writeProblem } from './file-access.js';
import { REDACTED, redact, rememberSecrets } from './secrets.js';
import { logTraceFields } from './trace/context.js';

export type { Logger } from 'pino';

/** Field names whose values never reach the log, wherever they appear. */
const REDACT_PATHS = [
  'apiKey',
  'token',
  'authorization',
  '*.apiKey',
  '*.token',
  '*.authorization',
  '*.headers.authorization',
  '*.botToken',
  '*.appToken',
  '*.signingSecret',
  // A command's reply route (an interaction's token, a response_url) answers for its operator from anywhere.
  'reply',
  '*.reply',
  'response_url',
  '*.response_url',
];

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One JSON log line as a short human line: `14:02:11 WARN message key=value ...` (for a terminal). */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, app: _app, pid: _pid, hostname: _host, err, ...rest } = record;
  const when = typeof time === 'number' ? new Date(time).toISOString().slice(11, 19) : '';
  const fields = Object.entries(rest).map(
    ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
  );
  const error = err && typeof err === 'object' ? ` (${String((err as { message?: unknown }).message ?? '')})` : '';
  return `${when} ${LEVELS[Number(level)] ?? String(level)} ${String(msg ?? '')}${error}${fields.length ? ` ${fields.join(' ')}` : ''}\n`;
}

/** Where log lines go: written before `write` returns, so no way of exiting loses the last ones. */
interface LineSink {
  write(text: string): void;
}

/** A stream that redacts each log line (and, for a terminal, makes it readable) before passing it on. */
function redactingStream(target: LineSink, pretty: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = redact(chunk.toString('utf8'));
      target.write(pretty ? prettyLine(line) : line);
      done();
    },
  });
}

/**
 * Opens the log file for appending, now: a file that cannot be opened (a folder, root's, a path
 * under a file) is one line naming LOG_FILE before anything starts, never a stack trace later.
 * Lines are written synchronously (as pino's `sync` destination does): the bridge exits with
 * `process.exit` after end of input, a signal or a fatal error, and an asynchronous write still
 * queued then never reaches the file.
 */
function openLogFile(file: string): LineSink {
  let fd: number;
  try {
    createFolders(path.dirname(file));
    fd = openSync(file, 'a');
  } catch (error) {
    throw new ConfigError('environment', 'LOG_FILE', `${file} ${writeProblem(file, error as NodeJS.ErrnoException)}`);
  }
  // A write that fails later (a full disk, say) must not take the bridge down: lines go to stderr from then on.
  let failed = false;
  return {
    write(text) {
      if (!failed) {
        try {
          const bytes = Buffer.from(text, 'utf8');
          for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
          return;
        } catch (error) {
          failed = true;
          process.stderr.write(
            `the log file ${file} cannot be written (${(error as Error).message}); logging to stderr\n`,
          );
        }
      }
      // A person at the terminal (the terminal room's transcript is there too) reads short lines, not JSON traces.
      process.stderr.write(process.stderr.isTTY ? prettyLine(text) : text);
    },
  };
}

export interface LogOptions {
  readonly level: string;
  /** A file to append JSON lines to; when absent, stderr. */
  readonly file?: string | undefined;
  /** Secrets to redact besides those the configuration made known (src/secrets.ts). */
  readonly secrets?: readonly string[];
  /** `json` (default for files and pipes) or `pretty` (default for a terminal). */
  readonly format?: 'json' | 'pretty' | undefined;
}

/** pino with redaction by field name and by value (known secrets, URL credentials, token shapes). */
export function createLogger(options: LogOptions): Logger {
  rememberSecrets(options.secrets ?? []);
  let target: LineSink = { write: (text) => process.stderr.write(text) };
  // JSON lines for files and pipes; short readable lines when a person watches stderr.
  const pretty = options.format === 'pretty' || (options.format !== 'json' && !options.file && process.stderr.isTTY);
  if (options.file) target = openLogFile(options.file);
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      base: { app: 'roundtable' },
      // A line written within a traced message's work carries its trace_id and span_id: it leads to its trace.
      mixin: logTraceFields,
    },
    redactingStream(target, pretty),
  );
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
