import { redact } from './secrets.js';

/** Base error: a code for programs, a message for people, the cause for the log. */
export class RoundtableError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad configuration: names the file (or variable), the line when known, and the field to fix. */
export class ConfigError extends RoundtableError {
  readonly file: string;
  readonly field: string | undefined;
  readonly line: number | undefined;
  constructor(file: string, field: string | undefined, problem: string, line?: number) {
    super('config', `${file}${line ? `:${line}` : ''}${field ? `: ${field}` : ''}: ${problem}`);
    this.file = file;
    this.field = field;
    this.line = line;
  }
}

/** A decision committed under a room lease this bridge no longer holds (replicas): nothing of it was stored. */
export class LeaseLostError extends RoundtableError {
  readonly roomId: number;
  readonly token: number;
  constructor(roomId: number, token: number) {
    super(
      'lease',
      `room ${roomId}: its lease (token ${token}) is no longer this bridge's; the decision was not stored`,
    );
    this.roomId = roomId;
    this.token = token;
  }
}

/** The LLM endpoint failed after retries. */
export class LlmError extends RoundtableError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** Worth another attempt (429, 5xx, a dropped connection, an answer that broke off). */
  readonly retryable: boolean;
  constructor(
    message: string,
    options: { status?: number; retryAfterMs?: number; retryable?: boolean; cause?: unknown } = {},
  ) {
    super('llm', message, { cause: options.cause });
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = options.retryable ?? false;
  }
}

/** What a sandbox failure is about, for callers that answer differently (the demo, /status). */
export type SandboxProblem = 'engine' | 'image' | 'workspace' | 'other';

/** The sandbox could not run a command (Docker down, image missing, ...). */
export class SandboxError extends RoundtableError {
  readonly problem: SandboxProblem;
  constructor(message: string, options?: { cause?: unknown; problem?: SandboxProblem }) {
    super('sandbox', message, options);
    this.problem = options?.problem ?? 'other';
  }
}

/** The store could not take a write. */
export class StoreError extends RoundtableError {
  /**
   * Worth another try: the store could not write now (a full disk, a lock held too long, a read-only file, an I/O
   * error), as opposed to a write it would refuse again (a broken constraint, a bug in a statement).
   */
  readonly retryable: boolean;
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super('store', message, { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

/** A chat platform refused or failed a request. */
export class AdapterError extends RoundtableError {
  readonly platform: string;
  /**
   * Worth another try: the platform failed for a reason that passes (5xx, 429, a dropped connection, a timeout), as
   * opposed to a refusal that would be repeated (missing access, an unknown channel, an invalid message).
   */
  readonly retryable: boolean;
  /** How long the platform asked to wait (a 429's Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(
    platform: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean; retryAfterMs?: number | undefined } = {},
  ) {
    super('adapter', `${platform}: ${message}`, { cause: options.cause });
    this.platform = platform;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * A short, human-readable description of any thrown value (for chat and logs), with secrets redacted:
 * a server's error may echo the key it was sent, and connection errors name the URL.
 */
export function describeError(error: unknown): string {
  return redact(error instanceof Error ? error.message : String(error));
}
