/**
 * The messaging actions of one agent's turn. Each is an `action` event for the room it acts on (that room decides:
 * it may refuse, and a post it accepts is recorded, counted and routed like any other agent message); the action
 * waits for the room's result, and answers the model with a line it can act on.
 */

import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../../config/index.js';
import { rootOf } from '../../room/approvals.js';
import type { ActionResult, TurnOrder } from '../../room/effects.js';
import type { Action } from '../../room/events.js';
import { pairKey } from '../../room/guards.js';
import { ActionRefused, type Messaging } from '../../tools/tool.js';
import type { RoomActor } from '../loop/room-actor.js';
import type { RoomHandle } from '../loop/room-handle.js';
import { RoomElsewhere, type Rooms } from '../loop/rooms.js';
import type { PostAction, Relay } from '../replicas/relay.js';
import type { Calls } from './calls.js';
import { CHAT_REQUESTS_PER_TURN, type PrivateChats } from './private-chats.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';

/** A room another bridge serves (`platform:channel`), the action handed to it there; `direct`: a DM room's agent. */
interface Elsewhere {
  readonly elsewhere: string;
  readonly direct?: string | undefined;
}
type Target = RoomActor | Elsewhere;

/**
 * How an agent's action reaches the room it acts on — here, or through the store in the bridge serving it — and its
 * result comes back once that room has decided (for a post: once it is on the platform).
 */
export class RoomActions {
  constructor(
    private readonly deps: {
      readonly calls: Calls;
      /** With bridges sharing the store: an action in a room another bridge serves is handed to it there. */
      readonly handed?: Pick<Relay, 'act'> | undefined;
      readonly rooms: Pick<Rooms, 'get'>;
    },
  ) {}

  /** The room `get` makes here, or the room another bridge serves (with bridges sharing the store). */
  async reach(get: (rooms: Pick<Rooms, 'get'>) => Promise<RoomActor>, direct?: string): Promise<Target> {
    try {
      return await get(this.deps.rooms);
    } catch (error) {
      if (!(error instanceof RoomElsewhere && this.deps.handed)) throw error;
      return { elsewhere: error.key, ...(direct !== undefined ? { direct } : {}) };
    }
  }

  /** Delivers `action` to the room `get` makes here (or to the bridge serving it); its result there. */
  async act(get: (rooms: Pick<Rooms, 'get'>) => Promise<RoomActor>, action: Action): Promise<ActionResult> {
    return this.send(await this.reach(get), action);
  }

  /** Delivers `action` to `target` and waits for its result there. */
  async send(target: Target, action: Action): Promise<ActionResult> {
    if ('elsewhere' in target) {
      // Another bridge serves the room: the action goes to it through the store, and its result comes back.
      const handed = this.deps.handed;
      if (!handed) throw new Error(`room ${target.elsewhere} is served by another bridge`);
      return handed.act(target.elsewhere, action, { direct: target.direct });
    }
    const { calls } = this.deps;
    const result = calls.action(action.call);
    const taken = await target.deliver({ type: 'action', action });
    if (taken !== 'done') calls.forget(action.call, `the room could not take the message (${taken})`);
    return result;
  }
}

export interface MessagingDeps {
  readonly agents: readonly AgentConfig[];
  /** How an action reaches its room (here, or the bridge serving it) and its result comes back. */
  readonly actions: RoomActions;
  readonly chats: PrivateChats;
  /** The rooms the agents act on (made on first use): by platform and channel (a DM: with its agent), or by key. */
  readonly rooms: Pick<Rooms, 'get' | 'byKey'>;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export class RoomMessaging implements Messaging {
  private chatRequestsThisTurn = 0;

  constructor(
    private readonly deps: MessagingDeps,
    private readonly room: RoomHandle,
    private readonly order: TurnOrder,
    private readonly agent: AgentConfig,
  ) {}

  async sendChannelMessage(input: { channel: string; message: string; requestReply: string[] }): Promise<string> {
    const target = await this.deps.actions.reach(() => this.resolve(input.channel));
    const where = { posted: `in ${input.channel}`, name: input.channel, roomsOnly: true };
    return this.post(target, input.message, input.requestReply, where);
  }

  async sendDm(input: { to: string; message: string; requestReply: boolean }): Promise<string> {
    if (this.agentNamed(input.to)) {
      throw new ActionRefused(`@${input.to} is an agent: use chat_request to talk with an agent privately`);
    }
    const adapter = this.room.adapter;
    if (!adapter.openDirect) throw new ActionRefused(`${adapter.platform} cannot open direct messages`);
    const channel = await adapter.openDirect(this.agent.name, input.to);
    if (!channel) throw new ActionRefused(`@${input.to} cannot be reached by direct message`);
    const dm = await this.deps.actions.reach(
      (rooms) => rooms.get(adapter.platform, channel, this.agent.name),
      this.agent.name,
    );
    const awaited = input.requestReply ? [input.to] : [];
    return this.post(dm, input.message, awaited, { posted: `to @${input.to}`, name: `the DM with @${input.to}` });
  }

  async chatRequest(input: { to: string; reason: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (++this.chatRequestsThisTurn > CHAT_REQUESTS_PER_TURN) {
      throw new ActionRefused(`at most ${CHAT_REQUESTS_PER_TURN} new chat requests per turn`);
    }
    const request = await this.deps.chats.request(this.agent, other, input.reason);
    return `Chat request #${request.id} sent to @${other.name}; they are asked to accept or decline now.`;
  }

  async chatResponse(input: { requestId: number; accept: boolean }): Promise<string> {
    const request = await this.deps.chats.respond(this.agent, input.requestId, input.accept);
    return input.accept
      ? `Accepted chat request #${request.id} from @${request.from}; use chat to talk with them privately.`
      : `Declined chat request #${request.id} from @${request.from}.`;
  }

  async chat(input: { to: string; message: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (!input.message.trim()) throw new ActionRefused('the message is empty');
    if (!(await this.deps.chats.accepted(this.agent.name, other.name))) {
      throw new ActionRefused(`you have no accepted chat with @${other.name}: send chat_request first`);
    }
    const pair = await this.pairRoom(other.name);
    // Starting (or restarting) the chat from a room of its own gives the pair a fresh turn count.
    const where = { posted: `to @${other.name}`, name: `the private chat with @${other.name}` };
    await this.post(pair, input.message, [], where, 'elsewhere' in pair || pair.key !== this.room.key);
    return `Sent privately to @${other.name}.`;
  }

  async look(): Promise<string> {
    return this.deps.chats.look(this.agent, (await this.deps.rooms.byKey(this.room.key))?.state.humans ?? []);
  }

  /** Posts as this agent in `target` (which may refuse), awaiting the people named in `awaited` there. */
  private async post(
    target: Target,
    text: string,
    awaited: readonly string[],
    /** roomsOnly: send_channel_message, which posts in rooms only (not DMs or private chats). */
    where: { readonly posted: string; readonly name: string; readonly roomsOnly?: boolean },
    fresh = false,
  ): Promise<string> {
    const { ask } = this.order;
    const call = randomUUID();
    const action: PostAction = {
      kind: 'post',
      call,
      from: {
        agent: this.agent.name,
        room: this.room.key,
        ask: ask.id,
        requests: ask.requests,
        people: ask.people ?? [],
        audience: ask.audience,
        root: rootOf(ask),
      },
      text,
      requestReply: awaited,
      ...(where.roomsOnly ? { roomsOnly: true } : {}),
      ...(fresh ? { fresh: true } : {}),
    };
    const outcome = await this.deps.actions.send(target, action);
    switch (outcome.kind) {
      case 'refused':
        throw new ActionRefused(`the humans have control in ${where.name} (${outcome.reason}); nothing was posted`);
      case 'private-room':
        throw new ActionRefused(`${where.name} is a private room; use send_dm or chat instead`);
      case 'failed':
        throw new Error(`the message could not be posted ${where.posted}: ${outcome.reason}`);
      case 'done':
        return outcome.text;
      case 'invalid':
        throw new ActionRefused(outcome.reason);
      case 'chat':
        throw new Error('a post was answered as a chat request');
      case 'posted': {
        const waiting = outcome.awaited ?? [];
        const request = outcome.request !== undefined && waiting.length > 0 ? outcome.request : undefined;
        if ('setup' in target ? target.setup.kind === 'direct' : target.direct !== undefined) {
          return request === undefined
            ? `Sent ${where.posted} privately.`
            : `Sent ${where.posted} privately. You will be resumed when they answer (request #${request}).`;
        }
        if (request === undefined) return `Posted ${where.posted}.`;
        const names = waiting.map((p) => `@${p.name}`).join(', ');
        return `Posted ${where.posted}. Waiting for ${names} (request #${request}); you will be resumed once with their answers.`;
      }
    }
  }

  private pairRoom(other: string): Promise<Target> {
    return this.deps.actions.reach((rooms) => rooms.get(PRIVATE_PLATFORM, pairKey(this.agent.name, other)));
  }

  private agentNamed(name: string): AgentConfig | undefined {
    return this.deps.agents.find((a) => same(a.name, name));
  }

  private otherAgent(name: string): AgentConfig {
    const other = this.agentNamed(name);
    if (!other) throw new ActionRefused(`there is no agent named @${name}`);
    if (same(other.name, this.agent.name)) throw new ActionRefused('you cannot chat with yourself');
    return other;
  }

  /** `here`, a room key (`platform:channel`), a reference the platform resolves, or a channel id. */
  private async resolve(reference: string): Promise<RoomActor> {
    const ref = reference.trim();
    if (!ref || ref === 'here' || ref === 'this') return this.deps.rooms.get(this.room.platform, this.room.channel);
    const byKey = ref.includes(':') ? await this.deps.rooms.byKey(ref) : undefined;
    if (byKey) return byKey;
    const resolved = (await this.room.adapter.resolveChannel?.(ref)) ?? (ref.startsWith('#') ? undefined : ref);
    if (!resolved) throw new ActionRefused(`there is no channel ${ref} here`);
    return this.deps.rooms.get(this.room.platform, resolved);
  }
}
