import { withAddressed } from '../room/addressed.js';
import { isNoProgress } from '../room/guards.js';
import { extractMentions } from '../room/mentions.js';
import { audienceOf } from '../room/privacy.js';
import { requestsOf } from '../room/routing.js';
import type { ReplyTo, RoomMessage, ToolRun } from '../room/types.js';
import type { Room } from './rooms.js';

/** A message to record in a room, before the rules have looked at it. */
export interface Recording {
  readonly author: string;
  readonly authorId: string;
  readonly kind: RoomMessage['kind'];
  readonly text: string;
  readonly at: number;
  readonly platformIds: readonly string[];
  readonly toolRuns?: readonly ToolRun[] | undefined;
  /** For an agent's message: what its turn answered (threads, people, the exchange's audience). */
  readonly replyTo?: ReplyTo | undefined;
  /** Who this message asks for a reply, when the caller decides (messaging actions: nobody). */
  readonly requests?: readonly string[] | undefined;
  /** Agents addressed by platform means (a human's reply to an agent's message). */
  readonly addressed?: readonly string[] | undefined;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Inbound recording: stores a message once (the store's unique key deduplicates) with what the rules
 * derive from it — the agents it addresses, whom it asks for a reply, and who may see it.
 */
export class Recorder {
  constructor(private readonly agents: readonly string[]) {}

  record(room: Room, message: Recording): RoomMessage | null {
    const isAgent = message.kind === 'agent';
    const self = isAgent ? message.author : undefined;
    const mentions = message.kind === 'system' ? [] : this.addressed(message, self);
    let requests: readonly string[] | undefined = message.requests;
    if (isAgent && !requests) {
      const previous = room.state.previousOwn(message.author);
      // Humans seen in the room are mentionable too: an agent may ask one of them.
      const people = room.state.humans().filter((name) => !this.agents.some((agent) => same(agent, name)));
      requests = isNoProgress(message.text, previous)
        ? []
        : requestsOf({
            agents: mentions,
            humans: extractMentions(message.text, people, self),
            author: message.author,
            answering: message.replyTo?.people ?? [],
            text: message.text,
          });
    }
    const audience = audienceOf({
      mode: room.state.privacy,
      kind: message.kind,
      author: message.author,
      mentions,
      replyAudience: message.replyTo?.audience,
    });
    return room.state.record({
      author: message.author,
      authorId: message.authorId,
      kind: message.kind,
      content: message.text,
      mentions,
      ...(requests ? { requests } : {}),
      ...(audience ? { audience } : {}),
      ...(message.toolRuns ? { toolRuns: message.toolRuns } : {}),
      at: message.at,
      platformIds: message.platformIds,
    });
  }

  /** `@mentions` of agents in first-mention order, then agents addressed by platform means. */
  private addressed(message: Recording, self: string | undefined): string[] {
    return withAddressed(extractMentions(message.text, this.agents, self), message.addressed, this.agents, self);
  }
}
