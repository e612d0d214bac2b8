import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../config/index.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted } from '../ports.js';
import { pairKey } from '../room/guards.js';
import type { Participant } from '../room/threads.js';
import type { Messaging } from '../tools/tool.js';
import type { Bridge, Room } from './bridge.js';

/** Private agent-to-agent chats live in rooms of this pseudo-platform; nothing is posted anywhere. */
export const PRIVATE_PLATFORM = 'private';

/** seed: at most 3 new chat requests per agent turn. */
export const CHAT_REQUESTS_PER_TURN = 3;

/** The private chats' "platform": messages are stored, shown to no one but the two agents and operators. */
export class PrivateRooms implements ChatAdapter {
  readonly platform = PRIVATE_PLATFORM;
  /** @param mirror shows each private message to operators (PRIVATE_CHAT_LOG), if configured. */
  constructor(private readonly mirror: (message: Outbound) => Promise<void> = async () => {}) {}
  async start(_sink: AdapterSink): Promise<void> {}
  async stop(): Promise<void> {}
  async post(message: Outbound): Promise<Posted> {
    await this.mirror(message);
    return { messageIds: [`private-${randomUUID()}`] };
  }
}

/** The two agents of a private room (`private:a+b`), in configured spelling. */
export function privatePair(bridge: Bridge, room: Room): [AgentConfig, AgentConfig] | undefined {
  if (room.state.row.platform !== PRIVATE_PLATFORM) return undefined;
  const [a, b] = room.state.row.channel.split('+').map((name) => bridge.agent(name));
  return a && b ? [a, b] : undefined;
}

/** The messaging actions of one agent in one room, for one turn. */
export class RoomMessaging implements Messaging {
  private chatRequestsThisTurn = 0;

  constructor(
    private readonly bridge: Bridge,
    private readonly room: Room,
    private readonly agent: AgentConfig,
  ) {}

  async sendChannelMessage(input: { channel: string; message: string; requestReply: string[] }): Promise<string> {
    const target = await this.resolve(input.channel);
    if (target.state.row.directAgent || target.state.row.platform === PRIVATE_PLATFORM) {
      throw new Error(`${input.channel} is a private room; use send_dm or chat instead`);
    }
    this.mayPost(target, input.channel);
    const awaited = this.participants(input.requestReply);
    const posted = await this.bridge.postAgent(target, this.agent, input.message, [], { requests: [] });
    if (!posted) throw new Error(`the message could not be posted in ${input.channel}`);
    if (awaited.length === 0) {
      this.bridge.afterRecord(target, posted, target.actor.epoch);
      return `Posted in ${input.channel}.`;
    }
    const thread = this.bridge.conductor.openThread(this.room, target, this.agent.name, input.message, awaited);
    return `Posted in ${input.channel}. Waiting for ${awaited.map((p) => `@${p.name}`).join(', ')} (request #${thread.id}); you will be resumed once with their answers.`;
  }

  async sendDm(input: { to: string; message: string; requestReply: boolean }): Promise<string> {
    if (this.bridge.agent(input.to)) {
      throw new Error(`@${input.to} is an agent: use chat_request to talk with an agent privately`);
    }
    const adapter = this.room.adapter;
    if (!adapter.openDirect) throw new Error(`${adapter.platform} cannot open direct messages`);
    const channel = await adapter.openDirect(this.agent.name, input.to);
    if (!channel) throw new Error(`@${input.to} cannot be reached by direct message`);
    const dm = this.bridge.room(adapter.platform, channel, this.agent.name);
    this.mayPost(dm, `the DM with @${input.to}`);
    const posted = await this.bridge.postAgent(dm, this.agent, input.message, [], { requests: [] });
    if (!posted) throw new Error(`the message to @${input.to} could not be posted`);
    if (!input.requestReply) return `Sent to @${input.to} privately.`;
    const thread = this.bridge.conductor.openThread(this.room, dm, this.agent.name, input.message, [
      { name: input.to, kind: 'human' },
    ]);
    return `Sent to @${input.to} privately. You will be resumed when they answer (request #${thread.id}).`;
  }

  async chatRequest(input: { to: string; reason: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (++this.chatRequestsThisTurn > CHAT_REQUESTS_PER_TURN) {
      throw new Error(`at most ${CHAT_REQUESTS_PER_TURN} new chat requests per turn`);
    }
    const chats = this.bridge.options.store.chats;
    const now = this.bridge.clock();
    chats.expire(now);
    const pending = chats
      .involving(this.agent.name)
      .find((r) => r.status === 'pending' && pairKey(r.from, r.to) === pairKey(this.agent.name, other.name));
    if (pending) throw new Error(`request #${pending.id} between you and @${other.name} is already pending`);
    const ttlMs = this.bridge.config.settings.CHAT_REQUEST_TIMEOUT_S * 1000; // seed: requests expire after 10 minutes
    const request = chats.create(this.agent.name, other.name, input.reason || '(no reason given)', now, ttlMs);
    return `Chat request #${request.id} sent to @${other.name}; they will see it at the start of their next turn.`;
  }

  async chatResponse(input: { requestId: number; accept: boolean }): Promise<string> {
    const chats = this.bridge.options.store.chats;
    chats.expire(this.bridge.clock());
    const request = Number.isInteger(input.requestId) ? chats.get(input.requestId) : undefined;
    if (!request || request.to.toLowerCase() !== this.agent.name.toLowerCase()) {
      throw new Error(`there is no chat request #${input.requestId} addressed to you`);
    }
    if (request.status !== 'pending') throw new Error(`chat request #${request.id} is ${request.status}`);
    chats.setStatus(request.id, input.accept ? 'accepted' : 'declined');
    if (input.accept) this.openPrivateRoom(request.from);
    return input.accept
      ? `Accepted chat request #${request.id} from @${request.from}; use chat to talk with them privately.`
      : `Declined chat request #${request.id} from @${request.from}.`;
  }

  async chat(input: { to: string; message: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (!input.message.trim()) throw new Error('the message is empty');
    const accepted = this.bridge.options.store.chats
      .involving(this.agent.name)
      .some((r) => r.status === 'accepted' && pairKey(r.from, r.to) === pairKey(this.agent.name, other.name));
    if (!accepted) throw new Error(`you have no accepted chat with @${other.name}: send chat_request first`);
    const room = this.bridge.room(PRIVATE_PLATFORM, pairKey(this.agent.name, other.name));
    // Starting (or restarting) the chat from a room of its own gives the pair a fresh turn count.
    if (room !== this.room) this.openPrivateRoom(other.name);
    this.mayPost(room, `the private chat with @${other.name}`);
    const posted = await this.bridge.postAgent(room, this.agent, input.message, [], { requests: [] });
    if (!posted) throw new Error('the message could not be stored');
    this.bridge.afterRecord(room, posted, room.actor.epoch);
    return `Sent privately to @${other.name}.`;
  }

  /** An agent may not post where the humans hold control (after a hand-back, /pass or /reset). */
  private mayPost(room: Room, name: string): void {
    const state = room.state.turnState;
    if (state.control === 'humans') {
      throw new Error(
        `the humans have control in ${name}${state.reason ? ` (${state.reason})` : ''}; nothing was posted`,
      );
    }
  }

  /** The pair's private room, with a fresh turn count and the agents in control. */
  private openPrivateRoom(other: string): void {
    const room = this.bridge.room(PRIVATE_PLATFORM, pairKey(this.agent.name, other));
    room.state.setTurnState({ consecutive: 0, control: 'agents' });
  }

  private otherAgent(name: string): AgentConfig {
    const other = this.bridge.agent(name);
    if (!other) throw new Error(`there is no agent named @${name}`);
    if (other.name === this.agent.name) throw new Error('you cannot chat with yourself');
    return other;
  }

  /** Agents by their configured name; any other name is a human's. */
  private participants(names: readonly string[]): Participant[] {
    const seen = new Set<string>();
    const out: Participant[] = [];
    for (const raw of names) {
      const agent = this.bridge.agent(raw);
      const name = agent?.name ?? raw;
      if (name.toLowerCase() === this.agent.name.toLowerCase() || seen.has(name.toLowerCase())) continue;
      seen.add(name.toLowerCase());
      out.push({ name, kind: agent ? 'agent' : 'human' });
    }
    return out;
  }

  /** `here`, a room key (`platform:channel`), a reference the platform resolves, or a channel id. */
  private async resolve(reference: string): Promise<Room> {
    const ref = reference.trim();
    if (!ref || ref === 'here' || ref === 'this') return this.room;
    const byKey = ref.includes(':') ? this.bridge.roomByKey(ref) : undefined;
    if (byKey) return byKey;
    const platform = this.room.state.row.platform;
    const resolved = (await this.room.adapter.resolveChannel?.(ref)) ?? (ref.startsWith('#') ? undefined : ref);
    if (!resolved) throw new Error(`there is no channel ${ref} here`);
    return this.bridge.room(platform, resolved);
  }
}
