/**
 * Operator slash commands on the control app (`/pass`, `/reset`, `/status`, `/privacy`): the room each one acts
 * on — the conversation's most recently active room (a thread is a room of its own) — and its answer, split, never
 * cut. What a command does is the bridge's business.
 */
import type { SlashCommand } from '@slack/bolt';
import { AdapterError, describeError } from '../../src/errors.js';
import type { AdapterSink, CommandName } from '../../src/ports.js';
import { splitMessage } from '../shared/split.js';
import { type CardClick, clickCommand } from './buttons.js';
import { SLACK } from './inbound.js';
import { SLACK_MESSAGE_LIMIT } from './posting.js';

interface RoomRef {
  readonly room: string;
  /** The agent whose private room it is (a DM). */
  readonly direct: string | undefined;
}

export class SlackCommands {
  /** The Slack conversation → its most recently active room. */
  private readonly lastRoom = new Map<string, RoomRef>();

  constructor(
    private readonly deps: {
      readonly operators: ReadonlySet<string>;
      /** The agent whose app a DM conversation belongs to. */
      readonly dmOwner: (channel: string) => string | undefined;
    },
  ) {}

  /** A room of a conversation was active (a message, a post): the next command there acts on it. */
  active(channel: string, room: string, direct: string | undefined): void {
    this.lastRoom.set(channel, { room, direct });
  }

  async answer(sink: AdapterSink, command: SlashCommand, respond: (text: string) => Promise<void>): Promise<void> {
    const name = command.command.replace(/^\//, '') as CommandName;
    const known = this.lastRoom.get(command.channel_id);
    const owner = this.deps.dmOwner(command.channel_id);
    if (!known && command.channel_id.startsWith('D') && !owner) {
      await respond('Nothing to act on here yet: write to the agent in this conversation first.');
      return;
    }
    const target: RoomRef = known ?? { room: command.channel_id, direct: owner };
    let answer: string | undefined;
    try {
      answer = await sink.command({
        platform: SLACK,
        channel: target.room,
        name,
        args: (command.text ?? '').trim(),
        user: { id: command.user_id, name: command.user_name },
        isOperator: this.deps.operators.has(command.user_id),
        ...(target.direct ? { direct: { agent: target.direct } } : {}),
        id: command.trigger_id,
        // Another bridge can answer through it (Slack takes 5 answers within 30 minutes) should this one be gone.
        reply: command.response_url,
      });
    } catch (error) {
      answer = `/${name} failed: ${describeError(error)}`;
    }
    // Another bridge sharing the store has this command already: it answers.
    if (answer === undefined) return;
    const where = target.room !== command.channel_id ? 'In the latest thread here: ' : '';
    // A long answer (a /status with many agents) is split, never cut.
    for (const part of splitMessage(where + answer, SLACK_MESSAGE_LIMIT)) await respond(part);
  }

  /** A click on a card's button (to the app `botId`): its command, in the card's room, answered to the clicker. */
  async click(
    sink: AdapterSink,
    click: CardClick,
    botId: string,
    respond: (text: string) => Promise<void>,
  ): Promise<void> {
    const event = clickCommand(click, { botId, operators: this.deps.operators, dmOwner: this.deps.dmOwner });
    let answer: string | undefined;
    try {
      answer = typeof event === 'string' ? event : await sink.command(event);
    } catch (error) {
      answer = `The button failed: ${describeError(error)}`;
    }
    // Another bridge sharing the store has this click already: it answers.
    if (answer === undefined) return;
    for (const part of splitMessage(answer, SLACK_MESSAGE_LIMIT)) await respond(part);
  }
}

/**
 * Answers a command another bridge received, through its `response_url` (`reply`), ephemerally; split, never cut.
 * An error names the status only, never the URL.
 */
export async function answerByResponseUrl(reply: string, text: string): Promise<void> {
  for (const part of splitMessage(text, SLACK_MESSAGE_LIMIT)) {
    let status: string;
    try {
      const response = await fetch(reply, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', text: part }),
        signal: AbortSignal.timeout(10_000),
      });
      if (response.ok) continue;
      status = ` (${response.status})`;
    } catch {
      status = '';
    }
    throw new AdapterError(SLACK, `the command could not be answered through its response_url${status}`);
  }
}
