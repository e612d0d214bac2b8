/**
 * A thread whose parent message belongs to another room: a reply under an agent's channel message, or under any
 * channel message with SLACK_REPLY_IN_THREAD=false. The thread is a room of its own, so without its parent the agents
 * would answer a reply to a message they cannot see. The first reply the bridge takes in there (in this run) carries
 * the parent as a quote before its own words: the parent is then part of the thread's history.
 */
import type { webApi } from '@slack/bolt';
import type { Logger } from '../../src/log.js';
import type { Inbound } from '../../src/ports.js';
import { withShared } from '../shared/quote.js';
import type { Directory } from './directory.js';
import type { OurApp, SlackMessageEvent } from './inbound.js';
import { slackToPlain } from './inbound-text.js';
import { roomOfMessage } from './rooms.js';

/** How many recent top-level messages, and threads given their parent, are remembered. */
const KEPT = 2000;

interface Parent {
  readonly author: string;
  readonly text: string;
}

export interface ThreadParentsDeps {
  readonly apps: readonly OurApp[];
  readonly replyInThread: boolean;
  /** Who is who (a fetched parent's author and mentions are learned first). */
  readonly directory: Pick<Directory, 'nameOf' | 'learn'>;
  readonly log: Logger;
}

export class ThreadParents {
  /** Top-level messages seen lately, `channel:ts` → who wrote what (as the agents read it). */
  private readonly recent = new Map<string, Parent>();
  /** Thread rooms whose parent was given. */
  private readonly given = new Map<string, true>();

  constructor(private readonly deps: ThreadParentsDeps) {}

  /** An agent's top-level post (its own echo may never come back as an event). */
  posted(channel: string, ts: string, agent: string, text: string): void {
    keep(this.recent, `${channel}:${ts}`, { author: agent, text });
  }

  /** `inbound` as the agents read it: with the thread's parent quoted first when its parent is elsewhere. */
  async read(client: webApi.WebClient, event: SlackMessageEvent, inbound: Inbound): Promise<Inbound> {
    const threadTs = event.thread_ts !== event.ts ? event.thread_ts : undefined;
    if (!threadTs) {
      keep(this.recent, `${event.channel}:${event.ts}`, { author: inbound.author.name, text: inbound.text });
      return inbound;
    }
    // A person's reply (an agent's is the bridge's own), and not an edit: its message was read already.
    if (inbound.author.kind !== 'human' || inbound.edit || this.given.has(inbound.channel)) return inbound;
    const byOurAgent = this.deps.apps.some((app) => app.botUserId === event.parent_user_id);
    const isDm = event.channel_type === 'im' || event.channel.startsWith('D');
    const parentRoom = roomOfMessage(
      { channel: event.channel, ts: threadTs, threadTs: undefined, isDm, byOurAgent },
      this.deps.replyInThread,
    );
    if (parentRoom === inbound.channel) return inbound; // the parent is this room's own first message
    const parent =
      this.recent.get(`${event.channel}:${threadTs}`) ?? (await this.fetch(client, event.channel, threadTs));
    if (!parent) return inbound;
    keep(this.given, inbound.channel, true);
    const quoted = withShared('', [parent]);
    return { ...inbound, text: quoted ? `${quoted}\n${inbound.text}` : inbound.text };
  }

  /** The parent from Slack (a message from before this run); undefined when it cannot be read now. */
  private async fetch(client: webApi.WebClient, channel: string, ts: string): Promise<Parent | undefined> {
    try {
      const page = await client.conversations.replies({ channel, ts, limit: 1, inclusive: true });
      const message = page.messages?.find((m) => m.ts === ts);
      if (!message) return undefined;
      const app = this.deps.apps.find((a) => a.botUserId === message.user || a.botId === message.bot_id);
      const mentioned = [...(message.text ?? '').matchAll(/<@([UW][A-Z0-9]+)/g)].map((m) => m[1] ?? '');
      await this.deps.directory.learn(client, [...(message.user && !app ? [message.user] : []), ...mentioned]);
      const isAgentName = (name: string) => this.deps.apps.some((a) => a.agent.toLowerCase() === name.toLowerCase());
      const author = app?.agent ?? (message.user && this.deps.directory.nameOf(message.user)) ?? 'someone';
      return { author, text: slackToPlain(message.text ?? '', (id) => this.deps.directory.nameOf(id), isAgentName) };
    } catch (error) {
      // A rate limit or a missing permission: the reply is read without its parent rather than held up.
      this.deps.log.debug({ err: error, channel, ts }, "slack: a thread's parent could not be read");
      return undefined;
    }
  }
}

/** Adds to a bounded map (the oldest entry goes first). */
function keep<T>(kept: Map<string, T>, key: string, value: T): void {
  kept.delete(key);
  kept.set(key, value);
  if (kept.size > KEPT) kept.delete(kept.keys().next().value as string);
}
