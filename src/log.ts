import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

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
];

/** Token shapes redacted even when they are not among the configured secrets. */
const TOKEN_PATTERNS = [
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI-style API keys
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g, // Slack bot/user tokens
  /\bxapp-[A-Za-z0-9-]{8,}/g, // Slack app tokens
  /\b[MN][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}/g, // Discord bot tokens
];

/** Replaces every known secret and token-shaped string in a line. */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const secret of secrets) {
    if (secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, '[redacted]');
  return out;
}

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

/** A stream that redacts each log line (and, for a terminal, makes it readable) before passing it on. */
function redactingStream(target: NodeJS.WritableStream, secrets: readonly string[], pretty: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = redact(chunk.toString('utf8'), secrets);
      target.write(pretty ? prettyLine(line) : line, () => done());
    },
  });
}

export interface LogOptions {
  readonly level: string;
  /** A file to append JSON lines to; when absent, stderr. */
  readonly file?: string | undefined;
  readonly secrets?: readonly string[];
  /** `json` (default for files and pipes) or `pretty` (default for a terminal). */
  readonly format?: 'json' | 'pretty' | undefined;
}

/** pino with redaction by field name and by value (configured secrets and token shapes). */
export function createLogger(options: LogOptions): Logger {
  let target: NodeJS.WritableStream = process.stderr;
  // JSON lines for files and pipes; short readable lines when a person watches stderr.
  const pretty = options.format === 'pretty' || (options.format !== 'json' && !options.file && process.stderr.isTTY);
  if (options.file) {
    mkdirSync(path.dirname(options.file), { recursive: true });
    target = createWriteStream(options.file, { flags: 'a' });
  }
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { app: 'roundtable' },
    },
    redactingStream(target, options.secrets ?? [], pretty),
  );
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
