/**
 * The MCP SDK's transport over a `SandboxProcess` (a stdio server inside the room's sandbox): newline-delimited
 * JSON-RPC, read with the SDK's own `ReadBuffer` and written with its `serializeMessage`, as its stdio transport does.
 */
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxProcess } from '../ports.js';

/** The largest line a server may send (one message): a result past it is an error, and the line is dropped. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** How much of a server's stderr is kept for the log and `--check` (its last lines). */
const STDERR_KEEP = 4000;

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private closed = false;
  /** The end of what the server wrote on stderr (why it would not start, most often). */
  stderr = '';
  /** How the process ended: its code, null when killed or its container went away, undefined while it runs. */
  exited: number | null | undefined;

  constructor(private readonly open: () => Promise<SandboxProcess>) {}

  private process: SandboxProcess | undefined;

  async start(): Promise<void> {
    const process = await this.open();
    this.process = process;
    process.onStdout((chunk) => {
      try {
        this.buffer.append(Buffer.from(chunk));
      } catch (error) {
        this.onerror?.(error as Error);
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          // A line that is no JSON-RPC message: reported, and the next line is read.
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    process.onStderr((chunk) => {
      this.stderr = (this.stderr + Buffer.from(chunk).toString('utf8')).slice(-STDERR_KEEP);
    });
    process.onExit((code) => {
      this.exited = code;
      this.ended();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || !this.process) throw new Error('the MCP server is not running');
    this.process.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    const process = this.process;
    if (process && !this.closed) await process.kill();
    this.ended();
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
