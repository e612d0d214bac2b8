import type { RoomMessage } from '../room/types.js';
import type { ChatCompletionMessageParam } from './client.js';

/** How much of a past tool result is replayed in later contexts. */
const RESULT_IN_HISTORY = 2000;

export interface ContextInput {
  readonly agent: { readonly name: string; readonly systemPrompt: string };
  /** Everyone at the table, for the room note. */
  readonly agentNames: readonly string[];
  /** The room's messages, oldest first. */
  readonly history: readonly RoomMessage[];
  readonly historyLimit: number;
  /** A note for this turn (why the agent was woken); appended to the system prompt. */
  readonly situation?: string | undefined;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n... [${text.length - max} more characters]`;
}

/** `[@speaker]: text`, with the speaker's tool runs before it as `[ran: cmd]` / `[result]: output`. */
export function renderMessage(message: RoomMessage): string {
  const speaker = message.kind === 'system' ? 'system' : `@${message.author}`;
  const runs = message.toolRuns.map(
    (run) =>
      `[ran: ${run.tool === 'bash' ? run.input : `${run.tool} ${run.input}`}]\n[result]: ${clip(run.output, RESULT_IN_HISTORY)}`,
  );
  return [...runs, `[${speaker}]: ${message.content}`].join('\n');
}

export function roomNote(name: string, others: readonly string[]): string {
  const table = others.length > 0 ? others.map((n) => `@${n}`).join(', ') : 'no other agents';
  return [
    `You are @${name} in a shared chat room with humans and other agents (${table}).`,
    'Each message is shown as [@speaker]: text. Write your reply as plain text, without a [@name]: prefix.',
    'Mention someone with @name to ask them something; they will be woken to answer.',
    'If you have nothing useful to add, reply with exactly [pass] and nothing else.',
    'To stop the agents and hand the conversation back to the humans, include <world>pass</world>.',
  ].join('\n');
}

/** The system prompt, then the last `historyLimit` messages: its own as assistant, the rest as user. */
export function buildContext(input: ContextInput): ChatCompletionMessageParam[] {
  const others = input.agentNames.filter((n) => n.toLowerCase() !== input.agent.name.toLowerCase());
  const system = [input.agent.systemPrompt, roomNote(input.agent.name, others), input.situation]
    .filter(Boolean)
    .join('\n\n');
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
  for (const message of input.history.slice(-input.historyLimit)) {
    const own = message.kind === 'agent' && message.author.toLowerCase() === input.agent.name.toLowerCase();
    messages.push({ role: own ? 'assistant' : 'user', content: renderMessage(message) });
  }
  return messages;
}

/** Models sometimes echo the transcript format; the prefix is not part of the reply. */
export function stripSpeakerPrefix(name: string, reply: string): string {
  const prefix = new RegExp(`^\\s*\\[@${name.replace(/[-]/g, '\\-')}\\]:\\s*`, 'i');
  return reply.replace(prefix, '');
}
