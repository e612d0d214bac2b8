/**
 * The MCP servers of every room: one connection per (room, agent, server), started when the agent first takes a turn
 * in the room, stopped with the room's sandbox or the bridge. A turn asks for the agent's tools here.
 */
import { KNOWN_TOOLS } from '../config/agent-file.js';
import type { AgentConfig } from '../config/load.js';
import type { McpServerConfig } from '../config/mcp-servers.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../ports.js';
import { redact } from '../secrets.js';
import type { Tool } from '../tools/tool.js';
import { McpConnection } from './connection.js';
import { type LeftOut, mcpTools } from './tools.js';

export interface McpPoolDeps {
  readonly sandbox: Sandbox;
  readonly log: Logger;
  /** One short line in a room (`platform:channel`): a server there stopped and is started again. */
  readonly tell?: ((room: string, line: string) => void) | undefined;
}

interface Entry {
  readonly server: McpServerConfig;
  readonly connection: McpConnection;
  /** The left-out tools last reported (so a list is reported once, not at every turn). */
  reported: string;
}

/** One line about a server: its name, where it runs, its state and tool count, or why it is down. */
export function serverLine(server: McpServerConfig, connection?: McpConnection): string {
  const where =
    server.kind === 'http' ? 'HTTP' : server.run === 'host' ? 'stdio on the HOST (run: host)' : 'stdio in the sandbox';
  if (!connection) return `${server.name} (${where}): not started`;
  const state = connection.state === 'ready' ? `ready, ${connection.tools.length} tools` : connection.state;
  // A server's stderr may echo its environment: the line is redacted like the log.
  return `${server.name} (${where}): ${state}${connection.problem ? ` — ${redact(connection.problem)}` : ''}`;
}

export class McpPool {
  private readonly entries = new Map<string, Entry[]>();
  private closed = false;

  constructor(private readonly deps: McpPoolDeps) {}

  private entriesFor(room: string, agent: AgentConfig): Entry[] {
    const key = `${room}\u0000${agent.name}`;
    let entries = this.entries.get(key);
    if (!entries) {
      entries = (agent.mcp ?? []).map((server) => ({
        server,
        reported: '',
        connection: new McpConnection({
          server,
          spawn: this.deps.sandbox.spawn ? (spec) => this.spawn(room, spec) : undefined,
          log: this.deps.log.child({ room, agent: agent.name }),
          tell: (line) => this.deps.tell?.(room, line),
        }),
      }));
      this.entries.set(key, entries);
    }
    return entries;
  }

  private spawn(room: string, spec: Parameters<NonNullable<Sandbox['spawn']>>[1]) {
    const spawn = this.deps.sandbox.spawn;
    if (!spawn) throw new Error('the sandbox cannot run MCP servers');
    return spawn.call(this.deps.sandbox, room, spec);
  }

  /**
   * The agent's MCP tools in a room, its servers started when they are not (a server that cannot start gives none,
   * and says why in the log). Sorted and named the same from turn to turn while the servers' lists stay the same.
   */
  async toolsFor(room: string, agent: AgentConfig): Promise<Tool[]> {
    if (this.closed || !agent.mcp?.length) return [];
    const entries = this.entriesFor(room, agent);
    await Promise.all(entries.map((entry) => entry.connection.ready().catch(() => {})));
    // A server that died and waits to start again keeps its tools: a call meanwhile says it is down and when it is
    // tried again, rather than the tool vanishing from the turn (and from the prompt's cached tool block).
    const ready = entries.filter(
      (entry) =>
        entry.connection.state === 'ready' || (entry.connection.state === 'down' && entry.connection.tools.length > 0),
    );
    const { tools, leftOut } = mcpTools(
      ready.map((entry) => ({
        handle: {
          connection: entry.connection,
          timeoutMs: entry.server.timeoutMs,
          priceUsd: entry.server.priceUsdPerCall,
        },
        tools: entry.connection.tools,
      })),
      KNOWN_TOOLS,
    );
    this.report(room, agent.name, ready, leftOut);
    return tools;
  }

  /** Tools left out are logged once per change of a server's list. */
  private report(room: string, agent: string, entries: Entry[], leftOut: readonly LeftOut[]): void {
    for (const entry of entries) {
      const mine = leftOut.filter((l) => l.server === entry.server.name);
      const text = mine.map((l) => `${l.tool}: ${l.problem}`).join('; ');
      if (text === entry.reported) continue;
      entry.reported = text;
      if (text) {
        this.deps.log.warn({ room, agent, server: entry.server.name, leftOut: mine }, 'MCP tools left out');
      }
    }
  }

  /** `/status`: a line per server of each agent in this room (`run: host` flagged), started or not. */
  status(room: string, agents: readonly AgentConfig[]): string[] {
    const lines: string[] = [];
    for (const agent of agents) {
      const entries = this.entries.get(`${room}\u0000${agent.name}`);
      for (const server of agent.mcp ?? []) {
        const entry = entries?.find((e) => e.server === server);
        lines.push(`MCP ${agent.name} · ${serverLine(server, entry?.connection)}`);
      }
    }
    return lines;
  }

  /** Stops the servers of a room (its sandbox was removed). */
  async closeRoom(room: string): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [key, entries] of this.entries) {
      if (!key.startsWith(`${room}\u0000`)) continue;
      this.entries.delete(key);
      stopping.push(...entries.map((entry) => entry.connection.close()));
    }
    await Promise.all(stopping);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.entries.values()].flat();
    this.entries.clear();
    await Promise.all(all.map((entry) => entry.connection.close()));
  }
}
