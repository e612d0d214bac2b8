/**
 * Holds the tool calls that need a person's approval (rule 17): the room is told (an `approval` event, which makes
 * the card), the call waits for the room's answer (`approval-result`), then runs with exactly the arguments shown, or
 * goes back to the model as refused. A `deny` rule refuses at once; `/pass` or the turn's end lets go of the wait.
 */
import { randomUUID } from 'node:crypto';
import { type ApprovalRules, modeFor } from '../../access/approval-rules.js';
import type { AgentConfig } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { MODEL_CALL } from '../../room/approvals.js';
import type { Root } from '../../room/state.js';
import { redact } from '../../secrets.js';
import { describeLimit, type SpendGate } from '../../spend/limits.js';
import { formatUsd } from '../../spend/money.js';
import { refused, type Tool, type ToolResult } from '../../tools/tool.js';
import { timeInTool } from '../../trace/tool.js';
import type { RoomHandle } from '../loop/room-handle.js';
import { actingOutside } from './acting.js';

/** The longest call a card shows in full (a Discord message holds 2,000 characters, the card's words included). */
export const CARD_INPUT_MAX = 1500;

/** Where a turn's calls are made: its room, its ask, its agent, and the human it acts for. */
interface Where {
  readonly room: RoomHandle;
  readonly ask: number;
  readonly agent: string;
  readonly root?: Root | undefined;
}

interface Answer {
  readonly approved: boolean;
  readonly reason: string;
}

/** What a call runs, as the card shows it: the command for bash, the arguments otherwise. */
export function callText(tool: Tool, args: unknown): string {
  return tool.inputOf?.(args) ?? JSON.stringify(args ?? {}, null, 1);
}

export class Approvals {
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  /** Each agent's rules as read again since the start (an agent file changed); absent: as configured. */
  private reloaded: ReadonlyMap<string, ApprovalRules | undefined> | undefined;

  constructor(
    private readonly log: Logger,
    /** ACTING_CHECK: an agent acting for someone only where they could themselves (else an operator approves). */
    private readonly actingCheck = true,
  ) {}

  /** Rules read again (an agent file changed): in force from each agent's next turn, without a restart. */
  update(agents: ReadonlyArray<Pick<AgentConfig, 'name' | 'approvals'>>): void {
    this.reloaded = new Map(agents.map((a) => [a.name.toLowerCase(), a.approvals]));
  }

  /** An agent's rules in force now. */
  rulesOf(agent: Pick<AgentConfig, 'name' | 'approvals'>): ApprovalRules | undefined {
    const key = agent.name.toLowerCase();
    return this.reloaded?.has(key) ? this.reloaded.get(key) : agent.approvals;
  }

  /** The turn's tools, each call checked against the agent's rules first. */
  wrap(tools: readonly Tool[], rules: ApprovalRules | undefined, where: Where): Tool[] {
    return tools.map((tool) => ({
      ...tool,
      run: (args, context) => this.run(tool, args, context, rules, where),
    }));
  }

  private async run(
    tool: Tool,
    args: unknown,
    context: Parameters<Tool['run']>[1],
    rules: ApprovalRules | undefined,
    where: Where,
  ): Promise<ToolResult> {
    const input = callText(tool, args);
    const { mode, why } = modeFor(rules, tool.name, input);
    if (mode === 'deny') return refused(input, why);
    const outside = this.actingCheck ? await actingOutside(where.room, where.root, tool.name, args) : undefined;
    if (mode === 'off' && !outside) return tool.run(args, context);
    const got = await this.ask(where, tool.name, input, outside, context.signal);
    context.signal.throwIfAborted();
    if (!got.approved) return refused(input, `not approved: ${got.reason}`);
    return tool.run(args, context);
  }

  /**
   * The model calls' gate (docs/trust.md): over the agent's `spend_threshold_usd` a call shows its worst case on a
   * card for the root or an operator; over a spending limit (SPEND_AT_LIMIT=ask) for an operator only.
   */
  spendGate(rules: ApprovalRules | undefined, where: Where, atLimit: boolean, model: string): SpendGate | undefined {
    if (!rules?.spendOver && !atLimit) return undefined;
    return {
      over: rules?.spendOver,
      atLimit,
      ask: ({ worst, reached }, signal) => {
        const input = `a call to ${model}, at most ${formatUsd(worst)}`;
        const outside = reached ? `it is over ${describeLimit(reached)}` : undefined;
        return this.ask(where, MODEL_CALL, input, outside, signal);
      },
    };
  }

  /** A card in the room for one call; resolves with its answer (the turn stopped: a denial). */
  private async ask(
    where: Where,
    tool: string,
    input: string,
    operatorsOnly: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const token = randomUUID();
    const shown = redact(input);
    const answer = new Promise<Answer>((resolve) => {
      this.waiting.set(token, resolve);
      signal?.addEventListener('abort', () => resolve({ approved: false, reason: 'the turn was stopped' }), {
        once: true,
      });
    });
    this.log.info({ room: where.room.key, agent: where.agent, tool }, 'a call waits for approval');
    void where.room.report({
      type: 'approval',
      request: {
        ask: where.ask,
        agent: where.agent,
        tool,
        input: shown,
        token,
        ...(shown.length > CARD_INPUT_MAX ? { tooLong: true } : {}),
        ...(operatorsOnly ? { operatorsOnly } : {}),
      },
    });
    const got = await timeInTool('approval', answer, { room: where.room.key, agent: where.agent });
    this.waiting.delete(token);
    if (got.approved) this.log.info({ room: where.room.key, agent: where.agent, tool }, 'a call was approved');
    return got;
  }

  /** The room's answer for a held call (none waiting: the turn is over, or was taken again with a new token). */
  settle(token: string, approved: boolean, reason: string): void {
    this.waiting.get(token)?.({ approved, reason });
  }
}
