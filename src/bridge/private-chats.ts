import type { AgentConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import { pairKey } from '../room/guards.js';
import { classifyReply } from '../room/turns.js';
import type { RoomMessage } from '../room/types.js';
import type { ChatRequest, ChatStore } from '../store/index.js';
import { ActionRefused } from '../tools/tool.js';
import type { Poster } from './poster.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';
import type { Room, Rooms } from './rooms.js';
import type { TurnRunner } from './turn-runner.js';

/** seed 001: at most 3 new chat requests per agent turn. */
export const CHAT_REQUESTS_PER_TURN = 3;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Private agent-to-agent chats (seed 001): requests, the recipient's turn to accept or decline, the
 * pair's private room, and what each agent is told at the start of its turns.
 */
export class PrivateChats {
  constructor(
    private readonly deps: {
      readonly agents: readonly AgentConfig[];
      readonly chats: ChatStore;
      readonly rooms: Rooms;
      readonly turns: TurnRunner;
      readonly poster: Poster;
      /** A message posted in a private room is routed like any other (the other agent answers). */
      readonly afterPost: (room: Room, message: RoomMessage) => void;
      readonly clock: () => number;
      readonly ttlMs: number;
      readonly log: Logger;
    },
  ) {}

  /** The pair's private room (`private:a+b`). */
  room(a: string, b: string): Room {
    return this.deps.rooms.get(PRIVATE_PLATFORM, pairKey(a, b));
  }

  /** The pair's room with a fresh turn count and the agents in control. */
  open(a: string, b: string): Room {
    const room = this.room(a, b);
    room.state.setTurnState({ consecutive: 0, control: 'agents' });
    return room;
  }

  /** A new request: stored, and its recipient gets a turn to accept or decline (in the pair's room). */
  request(from: AgentConfig, to: AgentConfig, reason: string): ChatRequest {
    const { chats, clock, ttlMs } = this.deps;
    chats.expire(clock());
    const pending = chats
      .involving(from.name)
      .find((r) => r.status === 'pending' && pairKey(r.from, r.to) === pairKey(from.name, to.name));
    if (pending) throw new ActionRefused(`request #${pending.id} between you and @${to.name} is already pending`);
    const request = chats.create(from.name, to.name, reason || '(no reason given)', clock(), ttlMs);
    const room = this.room(from.name, to.name);
    void room.actor.enqueue(() => this.recipientTurn(request.id));
    return request;
  }

  accepted(a: string, b: string): boolean {
    return this.deps.chats.involving(a).some((r) => r.status === 'accepted' && pairKey(r.from, r.to) === pairKey(a, b));
  }

  /** The recipient decides. Nothing it writes is shown to anyone unless it accepts. */
  private async recipientTurn(id: number): Promise<void> {
    const { chats, clock } = this.deps;
    chats.expire(clock());
    const request = chats.get(id);
    const to = request && this.deps.agents.find((a) => same(a.name, request.to));
    if (!request || !to || request.status !== 'pending') return;
    const room = this.open(request.from, request.to);
    const result = await this.deps.turns.run(
      room,
      to,
      { kind: 'chat-request', from: request.from, reason: request.reason, id: request.id },
      { threads: [], people: [request.from], audience: null },
    );
    await result.stream?.cancel().catch(() => {});
    if (result.kind === 'failed') {
      this.deps.log.warn({ err: result.error, agent: to.name, request: id }, 'chat request turn failed');
      return;
    }
    if (result.kind === 'aborted' || chats.get(id)?.status !== 'accepted') return;
    const outcome = classifyReply(result.text);
    if (outcome.kind !== 'message') return;
    const posted = await this.deps.poster.agent(room, to.name, outcome.text, {
      toolRuns: result.toolRuns,
      requests: [],
    });
    if (posted.kind === 'posted') this.deps.afterPost(room, posted.message);
  }

  /**
   * What `agent` reads at the start of a turn: requests waiting for its answer, its open chats, and —
   * once — how its own requests ended when they expired or were declined.
   */
  notes(agent: AgentConfig): string {
    const { chats, clock } = this.deps;
    const now = clock();
    chats.expire(now);
    const involving = chats.involving(agent.name);
    const lines: string[] = [];
    const pending = involving.filter((r) => r.status === 'pending' && same(r.to, agent.name));
    if (pending.length > 0) {
      lines.push('Private chat requests waiting for your answer (chat_response(request_id, accept)):');
      for (const r of pending) lines.push(`- #${r.id} from @${r.from}: ${r.reason}`);
    }
    const open = involving
      .filter((r) => r.status === 'accepted')
      .map((r) => (same(r.from, agent.name) ? r.to : r.from));
    if (open.length > 0) {
      lines.push(`You have private chats open with ${[...new Set(open)].map((n) => `@${n}`).join(', ')} (use chat).`);
    }
    for (const r of involving) {
      if (!same(r.from, agent.name) || r.senderTold) continue;
      if (r.status !== 'expired' && r.status !== 'declined') continue;
      lines.push(
        `Your chat request #${r.id} to @${r.to} ${r.status === 'expired' ? 'expired unanswered' : 'was declined'}.`,
      );
      chats.markTold(r.id);
    }
    return lines.join('\n');
  }

  /** The `look` action: who is at the table, and the pending requests. */
  look(room: Room, agent: AgentConfig): string {
    const others = this.deps.agents.filter((a) => !same(a.name, agent.name));
    const humans = room.state.humans().slice(0, 10);
    const pending = this.deps.chats
      .involving(agent.name)
      .filter((r) => r.status === 'pending' && r.expiresAt > this.deps.clock());
    return [
      `You are @${agent.name}.`,
      `Agents at the table: ${others.length > 0 ? others.map((a) => `@${a.name} (${a.activation})`).join(', ') : 'none'}.`,
      `Humans recently active here: ${humans.length > 0 ? humans.map((n) => `@${n}`).join(', ') : 'none'}.`,
      pending.length === 0
        ? 'Pending chat requests: none.'
        : `Pending chat requests: ${pending
            .map((r) =>
              same(r.to, agent.name) ? `#${r.id} from @${r.from} (${r.reason})` : `#${r.id} to @${r.to} (waiting)`,
            )
            .join('; ')}.`,
      'To talk privately with another agent: chat_request(to, reason).',
    ].join('\n');
  }
}
