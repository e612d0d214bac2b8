import type { AgentConfig } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Participant } from '../room/threads.js';
import type { ReplyTo, RoomMessage } from '../room/types.js';
import type { ChatStore } from '../store/index.js';
import { ActionRefused, type Messaging } from '../tools/tool.js';
import type { Poster } from './poster.js';
import { CHAT_REQUESTS_PER_TURN, type PrivateChats } from './private-chats.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';
import type { Requests } from './requests.js';
import type { Room, Rooms } from './rooms.js';

export interface MessagingDeps {
  readonly agents: readonly AgentConfig[];
  readonly rooms: Rooms;
  readonly poster: Poster;
  readonly requests: Requests;
  readonly chats: ChatStore;
  readonly privateChats: PrivateChats;
  readonly clock: () => number;
  /** A message an action posted is routed like a reply (others may answer it). */
  readonly afterPost: (room: Room, message: RoomMessage) => void;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The messaging actions of one agent in one room, for one turn. Refusals say why, for the model. */
export class RoomMessaging implements Messaging {
  private chatRequestsThisTurn = 0;

  constructor(
    private readonly deps: MessagingDeps,
    private readonly room: Room,
    private readonly agent: AgentConfig,
    /** What the turn answers: a request opened by an action nests in it. */
    private readonly replyTo: ReplyTo,
  ) {}

  async sendChannelMessage(input: { channel: string; message: string; requestReply: string[] }): Promise<string> {
    const target = await this.resolve(input.channel);
    if (target.state.row.directAgent || target.state.row.platform === PRIVATE_PLATFORM) {
      throw new ActionRefused(`${input.channel} is a private room; use send_dm or chat instead`);
    }
    this.mayPost(target, input.channel);
    const awaited = this.participants(input.requestReply);
    const posted = await this.post(target, input.message, `in ${input.channel}`);
    if (awaited.length === 0) {
      this.deps.afterPost(target, posted);
      return `Posted in ${input.channel}.`;
    }
    const thread = this.open(target, input.message, awaited);
    return `Posted in ${input.channel}. Waiting for ${awaited.map((p) => `@${p.name}`).join(', ')} (request #${thread.id}); you will be resumed once with their answers.`;
  }

  async sendDm(input: { to: string; message: string; requestReply: boolean }): Promise<string> {
    if (this.agentNamed(input.to)) {
      throw new ActionRefused(`@${input.to} is an agent: use chat_request to talk with an agent privately`);
    }
    const adapter = this.room.adapter;
    if (!adapter.openDirect) throw new ActionRefused(`${adapter.platform} cannot open direct messages`);
    const channel = await adapter.openDirect(this.agent.name, input.to);
    if (!channel) throw new ActionRefused(`@${input.to} cannot be reached by direct message`);
    const dm = this.deps.rooms.get(adapter.platform, channel, this.agent.name);
    this.mayPost(dm, `the DM with @${input.to}`);
    await this.post(dm, input.message, `to @${input.to}`);
    if (!input.requestReply) return `Sent to @${input.to} privately.`;
    const thread = this.open(dm, input.message, [{ name: input.to, kind: 'human' }]);
    return `Sent to @${input.to} privately. You will be resumed when they answer (request #${thread.id}).`;
  }

  async chatRequest(input: { to: string; reason: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (++this.chatRequestsThisTurn > CHAT_REQUESTS_PER_TURN) {
      throw new ActionRefused(`at most ${CHAT_REQUESTS_PER_TURN} new chat requests per turn`);
    }
    const request = this.deps.privateChats.request(this.agent, other, input.reason);
    return `Chat request #${request.id} sent to @${other.name}; they are asked to accept or decline now.`;
  }

  async chatResponse(input: { requestId: number; accept: boolean }): Promise<string> {
    const { chats, clock } = this.deps;
    chats.expire(clock());
    const request = Number.isInteger(input.requestId) ? chats.get(input.requestId) : undefined;
    if (!request || !same(request.to, this.agent.name)) {
      throw new ActionRefused(`there is no chat request #${input.requestId} addressed to you`);
    }
    if (request.status !== 'pending') throw new ActionRefused(`chat request #${request.id} is ${request.status}`);
    chats.setStatus(request.id, input.accept ? 'accepted' : 'declined');
    if (input.accept) this.deps.privateChats.open(this.agent.name, request.from);
    return input.accept
      ? `Accepted chat request #${request.id} from @${request.from}; use chat to talk with them privately.`
      : `Declined chat request #${request.id} from @${request.from}.`;
  }

  async chat(input: { to: string; message: string }): Promise<string> {
    const other = this.otherAgent(input.to);
    if (!input.message.trim()) throw new ActionRefused('the message is empty');
    const { privateChats } = this.deps;
    if (!privateChats.accepted(this.agent.name, other.name)) {
      throw new ActionRefused(`you have no accepted chat with @${other.name}: send chat_request first`);
    }
    // Starting (or restarting) the chat from a room of its own gives the pair a fresh turn count.
    const room = privateChats.room(this.agent.name, other.name);
    if (room !== this.room) privateChats.open(this.agent.name, other.name);
    this.mayPost(room, `the private chat with @${other.name}`);
    const posted = await this.post(room, input.message, 'privately');
    this.deps.afterPost(room, posted);
    return `Sent privately to @${other.name}.`;
  }

  async look(): Promise<string> {
    return this.deps.privateChats.look(this.room, this.agent);
  }

  /** Posts as this agent; a message an action posts asks nobody by its mentions (request_reply does). */
  private async post(room: Room, text: string, where: string): Promise<RoomMessage> {
    const posted = await this.deps.poster.agent(room, this.agent.name, text, { requests: [] });
    if (posted.kind === 'posted') return posted.message;
    if (posted.kind === 'failed')
      throw new Error(`the message could not be posted ${where}: ${describeError(posted.error)}`);
    throw new ActionRefused('the message is empty');
  }

  private open(target: Room, request: string, awaited: Participant[]) {
    return this.deps.requests.open({
      requester: this.agent.name,
      originRoom: this.room.key,
      targetRoom: target.key,
      parentId: this.replyTo.threads[0] ?? null,
      request,
      awaited,
      opener: { people: this.replyTo.people, audience: this.replyTo.audience },
    });
  }

  /** An agent may not post where the humans hold control (after a hand-back, /pass or /reset). */
  private mayPost(room: Room, name: string): void {
    const state = room.state.turnState;
    if (state.control === 'humans') {
      throw new ActionRefused(
        `the humans have control in ${name}${state.reason ? ` (${state.reason})` : ''}; nothing was posted`,
      );
    }
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

  /** Agents by their configured name; any other name is a human's. */
  private participants(names: readonly string[]): Participant[] {
    const out: Participant[] = [];
    for (const raw of names) {
      const agent = this.agentNamed(raw);
      const name = agent?.name ?? raw;
      if (same(name, this.agent.name) || out.some((p) => same(p.name, name))) continue;
      out.push({ name, kind: agent ? 'agent' : 'human' });
    }
    return out;
  }

  /** `here`, a room key (`platform:channel`), a reference the platform resolves, or a channel id. */
  private async resolve(reference: string): Promise<Room> {
    const ref = reference.trim();
    if (!ref || ref === 'here' || ref === 'this') return this.room;
    const byKey = ref.includes(':') ? this.deps.rooms.byKey(ref) : undefined;
    if (byKey) return byKey;
    const platform = this.room.state.row.platform;
    const resolved = (await this.room.adapter.resolveChannel?.(ref)) ?? (ref.startsWith('#') ? undefined : ref);
    if (!resolved) throw new ActionRefused(`there is no channel ${ref} here`);
    return this.deps.rooms.get(platform, resolved);
  }
}
