/**
 * Private agent-to-agent chats: the requests (stored), what each agent is told at the start of its turns, and who
 * is at the table (`look`). The pair's room itself (`private:a+b`) is a room like any other.
 */
import type { AgentConfig } from '../../config/index.js';
import { pairKey } from '../../room/guards.js';
import { oneLine, speakerName } from '../../room/text/quoting.js';
import type { ChatPort, ChatRequest } from '../../store/port.js';
import { ActionRefused } from '../../tools/tool.js';

/** At most this many new chat requests per agent turn. */
export const CHAT_REQUESTS_PER_TURN = 3;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export class PrivateChats {
  constructor(
    private readonly deps: {
      readonly agents: readonly AgentConfig[];
      readonly chats: ChatPort;
      readonly clock: () => number;
      readonly ttlMs: number;
    },
  ) {}

  /** A new request from `from` to `to` (refused while one is pending between them). */
  async request(from: AgentConfig, to: AgentConfig, reason: string): Promise<ChatRequest> {
    const { chats, clock, ttlMs } = this.deps;
    await chats.expire(clock());
    const pending = (await chats.involving(from.name)).find(
      (r) => r.status === 'pending' && pairKey(r.from, r.to) === pairKey(from.name, to.name),
    );
    if (pending) throw new ActionRefused(`request #${pending.id} between you and @${to.name} is already pending`);
    return chats.create(from.name, to.name, reason || '(no reason given)', clock(), ttlMs);
  }

  /** The recipient accepts or declines (refused when the request is not theirs or no longer pending). */
  async respond(agent: AgentConfig, id: number, accept: boolean): Promise<ChatRequest> {
    const { chats, clock } = this.deps;
    await chats.expire(clock());
    const request = Number.isInteger(id) ? await chats.get(id) : undefined;
    if (!request || !same(request.to, agent.name)) {
      throw new ActionRefused(`there is no chat request #${id} addressed to you`);
    }
    if (request.status !== 'pending') throw new ActionRefused(`chat request #${request.id} is ${request.status}`);
    await chats.setStatus(request.id, accept ? 'accepted' : 'declined');
    return request;
  }

  async accepted(a: string, b: string): Promise<boolean> {
    return (await this.deps.chats.involving(a)).some(
      (r) => r.status === 'accepted' && pairKey(r.from, r.to) === pairKey(a, b),
    );
  }

  /**
   * What `agent` reads at the start of a turn: requests waiting for its answer, its open chats, and — once — how
   * its own requests ended when they expired or were declined.
   */
  async briefing(agent: AgentConfig): Promise<string> {
    const { chats, clock } = this.deps;
    await chats.expire(clock());
    const involving = await chats.involving(agent.name);
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
    for (const r of involving) {
      if (!same(r.from, agent.name) || r.senderTold) continue;
      if (r.status !== 'expired' && r.status !== 'declined') continue;
      lines.push(
        `Your chat request #${r.id} to @${r.to} ${r.status === 'expired' ? 'expired unanswered' : 'was declined'}.`,
      );
      await chats.markTold(r.id);
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
}
