/**
 * Private agent-to-agent chats as the agents' turns reach them: a request, its answer and the sender's being told how
 * it ended go to the pair's room (`private:a+b`), whose `decide` decides them (src/room/chats.ts) and writes each
 * request to the store; what each agent is told at the start of its turns, and who is at the table (`look`), are read
 * from there across pairs.
 */
import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../../config/index.js';
import type { ActionResult } from '../../room/effects.js';
import type { Action } from '../../room/events.js';
import { pairKey } from '../../room/guards.js';
import { oneLine, speakerName } from '../../room/text/quoting.js';
import type { ChatPort, ChatRequest } from '../../store/port.js';
import { ActionRefused } from '../../tools/tool.js';
import type { Rooms } from '../loop/rooms.js';
import { PRIVATE_PLATFORM } from './private-rooms.js';

/**
 * At most this many new chat requests per agent turn. Counted by the turn (its messaging), not by a pair room: the
 * requests of one turn go to as many pair rooms as it names.
 */
export const CHAT_REQUESTS_PER_TURN = 3;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** How an action reaches a room (here, or the bridge serving it) and its result comes back: the agents' messaging. */
export interface Acting {
  act(room: (rooms: Pick<Rooms, 'get'>) => ReturnType<Rooms['get']>, action: Action): Promise<ActionResult>;
}

export class PrivateChats {
  /** New requests, one at a time: each id is the next after the highest stored when its pair room decides. */
  private requesting: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: {
      readonly agents: readonly AgentConfig[];
      readonly chats: ChatPort;
      readonly actions: Acting;
      readonly clock: () => number;
    },
  ) {}

  /** A new request from `from` to `to`, as the pair's room decided it (it refuses one while another is pending). */
  request(from: AgentConfig, to: AgentConfig, reason: string): Promise<ChatRequest> {
    const made = this.requesting.then(async () => {
      const id = await this.deps.chats.nextId();
      const known = await this.ofPair(from.name, to.name);
      const action = {
        kind: 'chat-request',
        call: randomUUID(),
        id,
        from: from.name,
        to: to.name,
        reason,
        known,
      } as const;
      return this.decided(await this.send(from.name, to.name, action));
    });
    this.requesting = made.catch(() => {});
    return made;
  }

  /** The recipient accepts or declines (the pair's room refuses it when it is not theirs or no longer pending). */
  async respond(agent: AgentConfig, id: number, accept: boolean): Promise<ChatRequest> {
    const stored = Number.isInteger(id) ? await this.deps.chats.get(id) : undefined;
    // No stored request: no pair room to ask.
    if (!stored) throw new ActionRefused(`there is no chat request #${id} addressed to you`);
    const known = await this.ofPair(stored.from, stored.to);
    const action = { kind: 'chat-response', call: randomUUID(), id, agent: agent.name, accept, known } as const;
    return this.decided(await this.send(stored.from, stored.to, action));
  }

  async accepted(a: string, b: string): Promise<boolean> {
    return (await this.deps.chats.involving(a)).some(
      (r) => r.status === 'accepted' && pairKey(r.from, r.to) === pairKey(a, b),
    );
  }

  /**
   * What `agent` reads at the start of a turn: requests waiting for its answer, its open chats, and — once — how
   * its own requests ended when they expired or were declined (each pair's room is told it was said).
   */
  async briefing(agent: AgentConfig): Promise<string> {
    const { chats, clock } = this.deps;
    // A request past its expiry reads as expired: its pair room expires it by the same rule, at its timer (or at the
    // next action that reaches it); nothing but the pair room writes it.
    const now = clock();
    const involving = (await chats.involving(agent.name)).map((r) =>
      r.status === 'pending' && r.expiresAt <= now ? { ...r, status: 'expired' as const } : r,
    );
    const lines: string[] = [];
    const pending = involving.filter((r) => r.status === 'pending' && same(r.to, agent.name));
    if (pending.length > 0) {
      lines.push('Private chat requests waiting for your answer (chat_response(request_id, accept)):');
      for (const r of pending) lines.push(`- #${r.id} from @${r.from}: ${oneLine(r.reason)}`);
    }
    const open = involving
      .filter((r) => r.status === 'accepted')
      .map((r) => (same(r.from, agent.name) ? r.to : r.from));
    if (open.length > 0) {
      lines.push(`You have private chats open with ${[...new Set(open)].map((n) => `@${n}`).join(', ')} (use chat).`);
    }
    const told = new Map<string, ChatRequest[]>();
    for (const r of involving) {
      if (!same(r.from, agent.name) || r.senderTold) continue;
      if (r.status !== 'expired' && r.status !== 'declined') continue;
      lines.push(
        `Your chat request #${r.id} to @${r.to} ${r.status === 'expired' ? 'expired unanswered' : 'was declined'}.`,
      );
      const pair = pairKey(r.from, r.to);
      told.set(pair, [...(told.get(pair) ?? []), r]);
    }
    for (const requests of told.values()) {
      const [first] = requests as [ChatRequest];
      const known = involving.filter((r) => pairKey(r.from, r.to) === pairKey(first.from, first.to));
      const action = { kind: 'chat-told', call: randomUUID(), ids: requests.map((r) => r.id), known } as const;
      const result = await this.send(first.from, first.to, action);
      if (result.kind === 'failed') throw new Error(`the private chat could not be reached: ${result.reason}`);
    }
    return lines.join('\n');
  }

  /** The `look` action: who is at the table, and the pending requests. */
  async look(agent: AgentConfig, humans: readonly string[]): Promise<string> {
    const others = this.deps.agents.filter((a) => !same(a.name, agent.name));
    const seen = humans.slice(0, 10);
    const now = this.deps.clock();
    const pending = (await this.deps.chats.involving(agent.name)).filter(
      (r) => r.status === 'pending' && r.expiresAt > now,
    );
    return [
      `You are @${agent.name}.`,
      `Agents at the table: ${others.length > 0 ? others.map((a) => `@${a.name} (${a.activation})`).join(', ') : 'none'}.`,
      `Humans recently active here: ${seen.length > 0 ? seen.map((n) => `@${speakerName(n)}`).join(', ') : 'none'}.`,
      pending.length === 0
        ? 'Pending chat requests: none.'
        : `Pending chat requests: ${pending
            .map((r) =>
              same(r.to, agent.name)
                ? `#${r.id} from @${r.from} (${oneLine(r.reason)})`
                : `#${r.id} to @${r.to} (waiting)`,
            )
            .join('; ')}.`,
      'To talk privately with another agent: chat_request(to, reason).',
    ].join('\n');
  }

  /** The stored requests between `a` and `b` (the pair's room takes in those it does not hold yet). */
  private async ofPair(a: string, b: string): Promise<ChatRequest[]> {
    return (await this.deps.chats.involving(a)).filter((r) => pairKey(r.from, r.to) === pairKey(a, b));
  }

  /** A chat action for the pair's room (here, or served by another bridge); its result there. */
  private async send(a: string, b: string, action: Action): Promise<ActionResult> {
    return this.deps.actions.act((rooms) => rooms.get(PRIVATE_PLATFORM, pairKey(a, b)), action);
  }

  /** The request as the pair's room left it, or its refusal. */
  private decided(result: ActionResult): ChatRequest {
    if (result.kind === 'chat') return result.request;
    if (result.kind === 'invalid') throw new ActionRefused(result.reason);
    throw new Error(`the private chat could not be reached: ${result.kind === 'failed' ? result.reason : result.kind}`);
  }
}
