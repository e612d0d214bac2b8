/**
 * Holds the tool calls that need a person's approval (rule 17): the room is told (an `approval` event, which makes
 * the card), the call waits for the room's answer (`approval-result`), then runs with exactly the arguments shown, or
 * goes back to the model as refused. A `deny` rule refuses at once; `/pass` or the turn's end lets go of the wait.
 */
import { randomUUID } from 'node:crypto';
import { type ApprovalRules, modeFor } from '../../access/approval-rules.js';
import type { Logger } from '../../log.js';
import type { Root } from '../../room/state.js';
import { redact } from '../../secrets.js';
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

  constructor(
    private readonly log: Logger,
    /** ACTING_CHECK: an agent acting for someone only where they could themselves (else an operator approves). */
    private readonly actingCheck = true,
  ) {}

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
    const token = randomUUID();
    const shown = redact(input);
    const answer = new Promise<Answer>((resolve) => {
      this.waiting.set(token, resolve);
      context.signal.addEventListener('abort', () => resolve({ approved: false, reason: 'the turn was stopped' }), {
        once: true,
      });
    });
    this.log.info({ room: where.room.key, agent: where.agent, tool: tool.name }, 'a tool call waits for approval');
    void where.room.report({
      type: 'approval',
      request: {
        ask: where.ask,
        agent: where.agent,
        tool: tool.name,
        input: shown,
        token,
        ...(shown.length > CARD_INPUT_MAX ? { tooLong: true } : {}),
        ...(outside ? { operatorsOnly: outside } : {}),
      },
    });
    const got = await timeInTool('approval', answer);
    this.waiting.delete(token);
    context.signal.throwIfAborted();
    if (!got.approved) return refused(input, `not approved: ${got.reason}`);
    this.log.info({ room: where.room.key, agent: where.agent, tool: tool.name }, 'a tool call was approved');
    return tool.run(args, context);
  }

  /** The room's answer for a held call (none waiting: the turn is over, or was taken again with a new token). */
  settle(token: string, approved: boolean, reason: string): void {
    this.waiting.get(token)?.({ approved, reason });
  }
}
