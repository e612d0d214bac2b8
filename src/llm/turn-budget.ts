import { BudgetError, cutMarker } from './budget.js';
import type { ChatCompletionMessageParam, ChatCompletionTool } from './client.js';
import { clipWithin } from './render-message.js';
import { countMessage, countRequest, type TokenCounter } from './tokens.js';

/**
 * Keeps a turn's tool loop within the agent's budget: each tool result is clipped to its share before it enters
 * the messages, and before each call the turn's earlier exchanges are shortened until the request fits.
 */
export class TurnBudget {
  constructor(
    private readonly counter: TokenCounter,
    /** The most a request may count (context less the answer's reserve). */
    private readonly limit: number,
    /** The most one tool result may take. */
    private readonly resultShare: number,
    private readonly tools: readonly ChatCompletionTool[],
    /** Messages of the context itself (never shortened here: the context was built within the budget). */
    private readonly contextLength: number,
    /**
     * What the context (its messages and the tool schemas) counts, as it was assembled from counted pieces: given,
     * only the turn's own exchanges are counted before each call, not the whole history again.
     */
    private readonly contextTokens?: number,
  ) {}

  /** The request as counted: the context's known count and the turn's exchanges, or every message when unknown. */
  private count(messages: readonly ChatCompletionMessageParam[]): number {
    if (this.contextTokens === undefined) return countRequest(this.counter, messages, this.tools);
    let total = this.contextTokens;
    for (let i = this.contextLength; i < messages.length; i++) {
      total += countMessage(this.counter, messages[i] as ChatCompletionMessageParam);
    }
    return total;
  }

  /** A tool result (an untrusted block) within its share, its block closed again if the cut went through it. */
  clipResult(text: string): string {
    return clipWithin(text, this.resultShare, this.counter);
  }

  /**
   * Shortens the turn's exchanges (in place) until the request fits: older rounds' results, then their call
   * arguments, then whole older rounds; the newest round's results last. Throws when even that is not enough.
   */
  fit(messages: ChatCompletionMessageParam[]): void {
    let total = this.count(messages);
    if (total <= this.limit) return;
    const replace = (index: number, next: ChatCompletionMessageParam) => {
      total +=
        countMessage(this.counter, next) - countMessage(this.counter, messages[index] as ChatCompletionMessageParam);
      messages[index] = next;
    };
    const rounds = () => {
      const starts: number[] = [];
      for (let i = this.contextLength; i < messages.length; i++) if (messages[i]?.role === 'assistant') starts.push(i);
      return starts;
    };
    const lastRound = () => rounds().at(-1) ?? messages.length;

    for (let i = this.contextLength; i < lastRound() && total > this.limit; i++) {
      const message = messages[i];
      if (message?.role === 'tool' && typeof message.content === 'string' && !message.content.startsWith('[… ')) {
        replace(i, { ...message, content: cutMarker(message.content.length) });
      }
    }
    for (let i = this.contextLength; i < lastRound() && total > this.limit; i++) {
      const message = messages[i];
      if (message?.role === 'assistant' && message.tool_calls) replace(i, withoutArguments(message));
    }
    while (total > this.limit && rounds().length > 1) {
      const [first, second] = rounds() as [number, number];
      total -= messages.slice(first, second).reduce((sum, m) => sum + countMessage(this.counter, m), 0);
      messages.splice(first, second - first);
    }
    for (let share = this.resultShare; total > this.limit && share > 16; share = Math.floor(share / 2)) {
      for (let i = lastRound(); i < messages.length; i++) {
        const message = messages[i];
        if (message?.role === 'tool' && typeof message.content === 'string') {
          replace(i, { ...message, content: clipWithin(message.content, share, this.counter) });
        }
      }
    }
    const last = messages[lastRound()];
    if (total > this.limit && last?.role === 'assistant' && last.tool_calls)
      replace(lastRound(), withoutArguments(last));
    if (total > this.limit) {
      throw new BudgetError(`the turn's tool calls do not fit the context budget (${total} of ${this.limit} tokens)`);
    }
  }
}

/** The call kept (so its result still answers it), its arguments replaced by valid JSON that says they were cut. */
function withoutArguments(message: ChatCompletionMessageParam & { role: 'assistant' }): ChatCompletionMessageParam {
  return {
    ...message,
    tool_calls: (message.tool_calls ?? []).map((call) =>
      call.type === 'function' && call.function.arguments.length > 80
        ? {
            ...call,
            function: {
              ...call.function,
              arguments: JSON.stringify({ cut: cutMarker(call.function.arguments.length) }),
            },
          }
        : call,
    ),
  };
}
