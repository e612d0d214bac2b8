import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxProcess } from '../src/ports.js';

/** The largest message the server may send (the SDK's ReadBuffer drops what it holds past it and reports an error). */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * The MCP stdio transport over a process in the sandbox: newline-delimited JSON-RPC on its stdin and stdout (the SDK's
 * own framing); its stderr is the server's log, not protocol. `close()` ends the process.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private started = false;
  private closed = false;

  constructor(private readonly child: SandboxProcess) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('ProcessTransport already started');
    this.started = true;
    this.child.onStdout((chunk) => this.read(chunk));
    this.child.onExit(() => this.ended());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the MCP server process has ended');
    this.child.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    await this.child.kill();
    this.ended();
  }

  private read(chunk: Uint8Array): void {
    try {
      this.buffer.append(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } catch (error) {
      this.fail(error);
      return;
    }
    for (;;) {
      try {
        // A line that is not JSON-RPC is consumed as it is reported; the lines after it are read on.
        const message = this.buffer.readMessage();
        if (!message) return;
        this.onmessage?.(message);
      } catch (error) {
        this.fail(error);
      }
    }
  }

  private fail(error: unknown): void {
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
