/**
 * The bridge's rooms as an MCP server for an operator's own coding agent: list the rooms, read a room's recent
 * messages, post into a web room as that operator, and `/status`, `/pass`, `/budget` — each through the path the
 * same act takes in the web room (a post is a person's message the router answers; a command is the operator's
 * command in that room). Who is asking comes with every call (`authInfo`, set by the endpoint from the token it
 * checked); nothing here opens without one.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TranscriptEntry } from '../overview.js';
import type { CommandName } from '../ports.js';
import type { WebIdentity } from '../store/port.js';

/** Messages `read_history` returns by default, and at most. */
export const HISTORY_DEFAULT = 30;
export const HISTORY_MAX = 100;
/** A tool run's output as `read_history` shows it, at most (the text of messages is never cut). */
const TOOL_OUTPUT_SHOWN = 2000;

/** A room as `list_rooms` shows it. */
export interface McpRoom {
  /** `platform:channel`: what the other tools take. */
  readonly room: string;
  readonly platform: string;
  readonly kind: 'room' | 'direct' | 'pair';
  /** Whether an operator can post into it here (the web rooms, and the terminal room of the same process). */
  readonly postable: boolean;
  /** Who holds control now, and the agents at work or waiting (absent for a room with no messages yet). */
  readonly control?: string;
  readonly working?: readonly string[];
  readonly queued?: readonly string[];
}

/** What the server needs of the bridge (the web room provides it). */
export interface OperatorDesk {
  /** Every room an operator may read: the web rooms, and every room the store knows. */
  rooms(): Promise<McpRoom[]>;
  /** A page of a room's stored messages, oldest first. */
  history(room: string, page: { limit: number; before?: number | undefined }): Promise<TranscriptEntry[]>;
  /**
   * Posts into a room (`platform:channel`: a web room, or the terminal room beside it) as this person, as their page
   * would; resolves with the message's id, rejects why not.
   */
  post(person: WebIdentity, room: string, text: string): Promise<string>;
  /** Carries out a command in the room as this person (operator or not, as the store says now); the answer. */
  command(person: WebIdentity, room: string, name: CommandName, args: string): Promise<string>;
  /** The longest post taken. */
  readonly maxText: number;
}

/** The person a call comes from, as the endpoint put it. */
export function personOf(auth: AuthInfo | undefined): WebIdentity | undefined {
  const person = auth?.extra?.person as WebIdentity | undefined;
  return person && typeof person.name === 'string' ? person : undefined;
}

/** The identity the endpoint passes with each request. */
export function authFor(person: WebIdentity, credential: string): AuthInfo {
  return { token: credential, clientId: person.name, scopes: ['operator'], extra: { person } };
}

const roomArg = z
  .string()
  .min(1)
  .max(300)
  .describe('A room from list_rooms: `platform:channel` (`web:general`), or a web room by name (`general`)');

export function createOperatorServer(desk: OperatorDesk, log: Logger, version = '0.1.0'): McpServer {
  const server = new McpServer(
    { name: 'roundtable', version },
    {
      capabilities: { logging: {} },
      instructions:
        'The rooms of a Roundtable bridge, as one of its operators. Read before you post; a post is a message from you ' +
        'that the agents answer as they would anyone in the room.',
    },
  );
  /** Runs a tool for an operator; anything else is an error result, and a failure one short line. */
  const operatorTool =
    <A>(name: string, run: (person: WebIdentity, args: A) => Promise<CallToolResult>) =>
    async (args: A, extra: { authInfo?: AuthInfo | undefined }): Promise<CallToolResult> => {
      const person = personOf(extra.authInfo);
      if (!person?.operator) return failure('This is for the bridge’s operators.');
      // What an operator did through their agent is in the log as what they did in the console is; reads at debug.
      const room = (args as { room?: unknown }).room;
      const acts = name !== 'list_rooms' && name !== 'read_history' && name !== 'status';
      log[acts ? 'info' : 'debug']({ tool: name, person: person.name, room }, 'an operator used a tool over MCP');
      try {
        return await run(person, args);
      } catch (error) {
        log.warn({ err: error, tool: name, person: person.name }, 'an MCP tool call failed');
        return failure(describeError(error));
      }
    };
  const knownRoom = async (room: string) => {
    const rooms = await desk.rooms();
    const key = room.includes(':') ? room : `web:${room.replace(/^#/, '').toLowerCase()}`;
    const found = rooms.find((r) => r.room === key);
    if (!found) throw new Error(`there is no room "${room}" (list_rooms names them)`);
    return found;
  };

  server.registerTool(
    'list_rooms',
    {
      title: 'List rooms',
      description: 'The rooms of the bridge: the web rooms (you can post there) and every room it has messages of.',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    operatorTool('list_rooms', async () => {
      const rooms = await desk.rooms();
      return result(rooms.map(roomLine).join('\n') || 'No rooms yet.', { rooms });
    }),
  );

  server.registerTool(
    'read_history',
    {
      title: 'Read a room',
      description: `A room's recent messages, oldest first (${HISTORY_DEFAULT} by default, at most ${HISTORY_MAX}); \`before\` a cursor for older ones.`,
      inputSchema: {
        room: roomArg,
        limit: z.number().int().min(1).max(HISTORY_MAX).optional(),
        before: z.number().int().min(1).optional().describe('`older` of an earlier answer: the messages before it'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    operatorTool(
      'read_history',
      async (_person, args: { room: string; limit?: number | undefined; before?: number | undefined }) => {
        const room = await knownRoom(args.room);
        const limit = args.limit ?? HISTORY_DEFAULT;
        const page = await desk.history(room.room, { limit, before: args.before });
        const messages = page.map(historyEntry);
        const older = page.length >= limit ? (page[0]?.cursor ?? null) : null;
        const text = messages.map((m) => `[${m.at}] ${m.author}${m.kind === 'human' ? '' : ` (${m.kind})`}: ${m.text}`);
        if (text.length === 0) text.push(`No messages in ${room.room}.`);
        return result(text.join('\n'), { room: room.room, messages, older });
      },
    ),
  );

  server.registerTool(
    'post',
    {
      title: 'Post in a room',
      description:
        'Posts a message into a web room (or the terminal room) as you; the room answers it as it answers anyone ' +
        'there (mention an agent with @name to ask it). Read the reply with read_history.',
      inputSchema: { room: roomArg, text: z.string().min(1).max(desk.maxText) },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    operatorTool('post', async (person, args: { room: string; text: string }) => {
      const room = await knownRoom(args.room);
      if (!room.postable) {
        return failure(`${room.room} is not a room you can post into: the web rooms and the terminal room are.`);
      }
      const id = await desk.post(person, room.room, args.text);
      return result(`Posted in ${room.room} as ${person.name}.`, { room: room.room, id });
    }),
  );

  const command = (name: CommandName, description: string, argument?: { key: string; schema: z.ZodType<string> }) =>
    server.registerTool(
      name,
      {
        title: `/${name}`,
        description,
        inputSchema: { room: roomArg, ...(argument ? { [argument.key]: argument.schema.optional() } : {}) },
        annotations: { readOnlyHint: name === 'status', openWorldHint: false },
      },
      operatorTool(name, async (person, args: Record<string, string | undefined>) => {
        const room = await knownRoom(args.room ?? '');
        const answer = await desk.command(person, room.room, name, (argument && args[argument.key]) ?? '');
        return result(answer || 'Done.', { room: room.room, answer });
      }),
    );
  command('status', "/status in a room: who holds control, who is working, the room's agents.");
  command('pass', '/pass in a room: stops the agents’ turns (or one agent’s) and hands control to the humans.', {
    key: 'agent',
    schema: z.string().max(100).describe('One agent to stop (default: every agent)'),
  });
  command('budget', "/budget in a room: today's spend against each limit; with `limit`, sets one.", {
    key: 'limit',
    schema: z
      .string()
      .max(100)
      .describe('As after /budget: `bridge 20`, `room 5`, `agent data 2` (US dollars a day; `off`, `default`)'),
  });
  return server;
}

function roomLine(room: McpRoom): string {
  const state = room.control ? `, control: ${room.control}` : '';
  const working = room.working?.length ? `, working: ${room.working.join(', ')}` : '';
  return `${room.room} (${room.kind}${room.postable ? ', you can post' : ''}${state}${working})`;
}

function historyEntry(entry: TranscriptEntry) {
  return {
    id: entry.id,
    cursor: entry.cursor,
    author: entry.author,
    kind: entry.kind,
    text: entry.text,
    at: new Date(entry.at).toISOString(),
    tools: entry.toolRuns.map((run) => ({
      tool: run.tool,
      input: run.input,
      output: run.output.length > TOOL_OUTPUT_SHOWN ? `${run.output.slice(0, TOOL_OUTPUT_SHOWN)}…` : run.output,
    })),
  };
}

function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
