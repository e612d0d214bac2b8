/**
 * One MCP server for one agent in one room: started on first use, its tool list read at start and again when the
 * server says it changed, calls made with the turn's signal (an abort sends `notifications/cancelled`) and a timeout.
 * A server that dies is started again with backoff, and the room is told in one line; it never takes the bridge down.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Backoff, DEFAULT_BACKOFF } from '../bridge/backoff.js';
import type { McpServerConfig } from '../config/mcp-servers.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ProcessSpec, SandboxProcess } from '../ports.js';
import { MAX_MESSAGE_BYTES, ProcessTransport } from './process-transport.js';

/** The bridge as an MCP client, as servers see it. */
export const CLIENT_INFO = { name: 'roundtable', version: '0.1.0' } as const;

export type ServerState = 'idle' | 'starting' | 'ready' | 'down' | 'stopped';

/** How long a server must stay up before its next death starts the backoff from the first wait again. */
const STABLE_MS = 30_000;
/** The longest a start (spawn and handshake) may take. */
const START_TIMEOUT_MS = 30_000;
/** Pages of a tool list read at most (a server that pages for ever is cut there). */
const MAX_PAGES = 20;

/**
 * A tools/list answer read loosely: one tool the SDK's schema would refuse (an inputSchema that is no object schema)
 * must not cost the server all its tools; each tool is judged on its own (src/mcp/schema.ts).
 */
const looseList = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A listed tool with at least a name; what else it has is checked where it is used. */
function asTool(value: unknown): ListedTool | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const tool = value as Record<string, unknown>;
  if (typeof tool.name !== 'string' || tool.name === '') return undefined;
  const annotations = tool.annotations && typeof tool.annotations === 'object' ? tool.annotations : undefined;
  return {
    ...(tool as object),
    name: tool.name,
    description: typeof tool.description === 'string' ? tool.description : undefined,
    annotations,
  } as ListedTool;
}

export interface ConnectionOptions {
  readonly server: McpServerConfig;
  /** Starts a process in the room's sandbox (absent: the sandbox cannot, and a `run: sandbox` server cannot start). */
  readonly spawn?: ((spec: ProcessSpec) => Promise<SandboxProcess>) | undefined;
  readonly log: Logger;
  /** One short line for the room (a server that stopped and is being started again). */
  readonly tell?: ((line: string) => void) | undefined;
  /** The tools the server lists now (after a start, and after each `notifications/tools/list_changed`). */
  readonly onTools?: ((tools: readonly ListedTool[]) => void) | undefined;
  readonly backoff?: Backoff | undefined;
  readonly clock?: () => number;
  /** The longest a start (spawn, handshake, first list) may take; default 30 s. */
  readonly startTimeoutMs?: number | undefined;
}

/** The SDK transport a server's configuration asks for. */
export function transportFor(
  server: McpServerConfig,
  spawn?: (spec: ProcessSpec) => Promise<SandboxProcess>,
): Transport & { stderrText?: () => string; exitCode?: () => number | null | undefined } {
  if (server.kind === 'http') {
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { ...server.headers } } });
  }
  if (server.run === 'host') {
    const transport = new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: { ...getDefaultEnvironment(), ...server.env },
      stderr: 'pipe',
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    return Object.assign(transport, { stderrText: () => stderr });
  }
  if (!spawn) {
    throw new Error('the sandbox cannot run MCP servers (it has no long-lived processes); use run: host to opt in');
  }
  const transport = new ProcessTransport(() => spawn({ command: server.command, args: server.args, env: server.env }));
  return Object.assign(transport, { stderrText: () => transport.stderr, exitCode: () => transport.exited });
}

/** Why a start failed, in one line: the server's last stderr line when it said something. */
function startProblem(error: unknown, stderr: string): string {
  const last = stderr.trim().split('\n').at(-1)?.trim();
  const why =
    error instanceof z.ZodError
      ? `the server's answer is not MCP (${error.issues[0]?.path.join('.') ?? ''}: ${error.issues[0]?.message ?? ''})`
      : (describeError(error).split('\n')[0] ?? 'unknown error');
  return last && !why.includes(last) ? `${why} (stderr: ${last.slice(0, 200)})` : why;
}

export class McpConnection {
  state: ServerState = 'idle';
  /** The tools as the server lists them now. */
  tools: readonly ListedTool[] = [];
  /** The last start's or death's reason, for `/status` and `--check`. */
  problem: string | undefined;
  private client: Client | undefined;
  /** The client of a start under way. */
  private opening: Client | undefined;
  private starting: Promise<void> | undefined;
  private tries = 0;
  private readyAt = 0;
  private nextStart = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private readonly clock: () => number;
  private readonly startTimeoutMs: number;

  constructor(private readonly options: ConnectionOptions) {
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
    this.clock = options.clock ?? Date.now;
  }

  get name(): string {
    return this.options.server.name;
  }

  /** Started when it is not; rejects with why it cannot start (or why it is down and not yet due to start again). */
  async ready(): Promise<void> {
    if (this.state === 'ready') return;
    if (this.state === 'stopped') throw new Error(`the MCP server ${this.name} is stopped`);
    if (!this.starting) {
      if (this.state === 'down' && this.clock() < this.nextStart) {
        const seconds = Math.ceil((this.nextStart - this.clock()) / 1000);
        throw new Error(
          `the MCP server ${this.name} is down (${this.problem ?? 'it stopped'}); next try in ${seconds}s`,
        );
      }
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    await this.starting;
  }

  private async start(): Promise<void> {
    const { server, log } = this.options;
    this.state = 'starting';
    let transport: ReturnType<typeof transportFor> | undefined;
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: {
        tools: {
          autoRefresh: false,
          debounceMs: 0,
          onChanged: () => {
            // It may come while the start still reads the first list (a server adding tools once initialised).
            if (client !== this.client && client !== this.opening) return;
            this.list(client).then(
              (tools) => {
                if (client !== this.client && client !== this.opening) return;
                this.tools = tools;
                this.options.onTools?.(tools);
              },
              (error: unknown) =>
                log.warn({ err: error, server: server.name }, 'an MCP server changed its tools but did not list them'),
            );
          },
        },
      },
    });
    this.opening = client;
    try {
      transport = transportFor(server, this.options.spawn);
      await client.connect(transport, { timeout: this.startTimeoutMs });
      const tools = await this.list(client);
      this.client = client;
      this.tools = tools;
      this.state = 'ready';
      this.problem = undefined;
      this.readyAt = this.clock();
      const ended = transport;
      client.onclose = () => this.closed(client, ended.exitCode?.());
      client.onerror = (error) =>
        log.warn({ err: error, server: server.name }, 'an MCP server sent what is no message');
      this.options.onTools?.(this.tools);
      log.info({ server: server.name, tools: this.tools.length }, 'MCP server started');
    } catch (error) {
      this.problem = startProblem(error, transport?.stderrText?.() ?? '');
      void client.close().catch(() => {});
      this.down();
      log.warn({ server: server.name, problem: this.problem }, 'an MCP server could not start');
      throw new Error(`the MCP server ${server.name} could not start: ${this.problem}`);
    } finally {
      this.opening = undefined;
    }
  }

  /** Every page of the server's tool list; entries without a name are dropped. */
  private async list(client: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await client.request(
        { method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) },
        looseList,
        { timeout: this.startTimeoutMs },
      );
      for (const value of answer.tools) {
        const tool = asTool(value);
        if (tool) tools.push(tool);
      }
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /**
   * The server went away by itself: down, told once, started again after the backoff. A sandbox process ended with no
   * code (the room's container went away: idle, reset) is not a failure: it starts again, quietly, at the next use.
   */
  private closed(client: Client, exitCode: number | null | undefined): void {
    if (client !== this.client || this.state === 'stopped') return;
    this.client = undefined;
    if (exitCode === null) {
      this.state = 'idle';
      this.options.log.info({ server: this.name }, 'an MCP server ended with its sandbox; it starts at the next use');
      return;
    }
    if (this.clock() - this.readyAt > STABLE_MS) this.tries = 0;
    this.problem = 'it stopped';
    const wait = this.down();
    this.options.log.warn({ server: this.name, waitMs: wait }, 'an MCP server stopped; it is started again');
    this.options.tell?.(`MCP server ${this.name} stopped; starting it again in ${Math.ceil(wait / 1000)}s.`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.ready().catch(() => {}), wait);
    this.timer.unref();
  }

  private down(): number {
    this.state = 'down';
    this.tries += 1;
    const wait = this.backoff(this.tries);
    this.nextStart = this.clock() + wait;
    return wait;
  }

  /** Calls a tool; rejects when the server is not there, the call times out, or the signal aborts it. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: { readonly signal: AbortSignal; readonly timeoutMs: number },
  ): Promise<CallToolResult> {
    await this.ready();
    const client = this.client;
    if (!client) throw new Error(`the MCP server ${this.name} is not running`);
    const result = await client.callTool({ name: tool, arguments: args }, undefined, {
      signal: options.signal,
      timeout: options.timeoutMs,
    });
    return result as CallToolResult;
  }

  /** Stops the server for good (the room's sandbox is removed, the bridge stops). */
  async close(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }
}
