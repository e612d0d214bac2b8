/**
 * The framing between the bridge and the command runner (sandbox/runner.py, which documents the
 * messages). Requests are a 4-byte length and JSON; replies a 9-byte header (length, kind, id)
 * and a payload, raw bytes for output so a command's bytes reach the OutputBuffer untouched.
 */

export const RUNNER_PROTOCOL = 1;

export type RunnerRequest =
  | {
      readonly op: 'run';
      readonly id: number;
      readonly command: string;
      /** No file the command writes may grow past this many bytes (RLIMIT_FSIZE). */
      readonly fsize?: number;
      /** Report the workspace's size and entry count when the command ends. */
      readonly disk?: boolean;
      /** Watch the workspace while the command runs; stop it past these limits (0 = none). */
      readonly quota?: {
        readonly bytes: number;
        readonly files: number;
        readonly usedBytes: number;
        readonly usedFiles: number;
      };
    }
  | { readonly op: 'kill'; readonly id: number };

export type FrameKind = 'hello' | 'accepted' | 'started' | 'output' | 'gap' | 'end';

export interface RunnerFrame {
  readonly kind: FrameKind;
  readonly id: number;
  readonly payload: Buffer;
}

const KINDS: Record<string, FrameKind> = { H: 'hello', A: 'accepted', S: 'started', O: 'output', G: 'gap', E: 'end' };
const HEADER_BYTES = 9;
/** The runner sends output in pieces of at most 64 KiB and small JSON otherwise. */
const MAX_FRAME = 1024 * 1024;

export function encodeRequest(request: RunnerRequest): Buffer {
  const body = Buffer.from(JSON.stringify(request));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/** The reply is malformed: the runner is not (or no longer) speaking this protocol. */
export class RunnerProtocolError extends Error {}

/**
 * Reassembles reply frames from stream chunks of any size. It holds at most one unfinished
 * frame, and refuses lengths over MAX_FRAME, so memory stays bounded whatever arrives.
 */
export class RunnerDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly onFrame: (frame: RunnerFrame) => void) {}

  write(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= HEADER_BYTES) {
      const head = this.peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      const kind = KINDS[String.fromCharCode(head.readUInt8(4))];
      if (!kind || length > MAX_FRAME) {
        throw new RunnerProtocolError(`unexpected reply header ${head.toString('hex')}`);
      }
      if (this.pendingBytes < HEADER_BYTES + length) return;
      const frame = this.take(HEADER_BYTES + length);
      this.onFrame({ kind, id: frame.readUInt32BE(5), payload: frame.subarray(HEADER_BYTES) });
    }
  }

  private peek(bytes: number): Buffer {
    if ((this.pending[0]?.length ?? 0) < bytes) this.pending = [Buffer.concat(this.pending)];
    return (this.pending[0] as Buffer).subarray(0, bytes);
  }

  private take(bytes: number): Buffer {
    const all = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    this.pending = all.length > bytes ? [all.subarray(bytes)] : [];
    this.pendingBytes -= bytes;
    return all.subarray(0, bytes);
  }
}

/** Parses a JSON payload (hello, started, gap, end). */
export function framePayload<T>(frame: RunnerFrame): T {
  try {
    return JSON.parse(frame.payload.toString('utf8')) as T;
  } catch (error) {
    throw new RunnerProtocolError(`unreadable ${frame.kind} reply`, { cause: error });
  }
}
