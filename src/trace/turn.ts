/**
 * An agent's turn as a span, by the GenAI conventions (`chat <model>`, `gen_ai.*`: model, tokens in, cached, out;
 * `server.address`: the endpoint's host) with the bridge's figures under `roundtable.*` (cost, time to first token,
 * outcome). It joins the trace of the message that started the chain (kept with the ask in the room's state); a turn
 * asked for by a request, a resume or a private chat request also links to that message's span. A turn taken again
 * after a restart says so. Tool runs hang below it, and so do its posts.
 */
import { type Context, type Link, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LlmUsage } from '../llm/usage.js';
import { estimateCost } from '../llm/usage-report.js';
import type { TurnOrder } from '../room/effects.js';
import type { TurnOutcome } from '../room/events.js';
import { classifyReply } from '../room/text/replies.js';
import { ATTR_SERVER_ADDRESS } from './attributes.js';
import { keepTurn } from './book.js';
import { contentOf } from './content.js';
import { contextOf, logFieldsOf, spanContextOf } from './context.js';
import { GEN_AI, RT, tracer } from './names.js';
import { tracing } from './switch.js';

interface Agent {
  readonly name: string;
  readonly model: string;
  readonly endpoint: string;
  readonly price?: { readonly input: number; readonly cached: number; readonly output: number } | undefined;
}

/** What a turn's code tells its span while it runs (nothing, cheaply, when there is no span). */
export interface TurnTrace {
  /** The turn's span as a parent: its tool runs hang below it (carried explicitly, not as the active context). */
  readonly context: Context;
  /** The ids the turn's log lines carry (bound to its logger). */
  readonly logFields: Record<string, string>;
  usage(usage: LlmUsage): void;
  /** Wraps a streamed-text callback: its first call is the time to first token. */
  text(show: (text: string) => void): (text: string) => void;
}

const LINKED = new Set(['request', 'resume', 'chat-request']);

function hostOf(endpoint: string): string | undefined {
  try {
    return new URL(endpoint).hostname;
  } catch {
    return undefined;
  }
}

/** Runs the turn under its span (ended with the turn's outcome); without tracing, just runs it. */
export async function traceTurn(
  room: string,
  order: TurnOrder,
  agent: Agent,
  run: (traced: TurnTrace | undefined) => Promise<TurnOutcome>,
): Promise<TurnOutcome> {
  if (!tracing) return run(undefined);
  const { ask } = order;
  const origin = spanContextOf(ask.trace);
  if (!origin) return run(undefined);
  const links: Link[] = LINKED.has(ask.reason) ? [{ context: origin, attributes: { [`${RT}.link`]: ask.reason } }] : [];
  const host = hostOf(agent.endpoint);
  const span = tracer().startSpan(
    `chat ${agent.model}`,
    {
      kind: SpanKind.CLIENT,
      links,
      attributes: {
        [GEN_AI.operation]: 'chat',
        [GEN_AI.model]: agent.model,
        [GEN_AI.agentName]: agent.name,
        ...(host ? { [ATTR_SERVER_ADDRESS]: host } : {}),
        [`${RT}.room`]: room,
        [`${RT}.agent`]: agent.name,
        [`${RT}.ask`]: ask.id,
        [`${RT}.reason`]: ask.reason,
        [`${RT}.situation`]: order.situation.kind,
        ...(order.again ? { [`${RT}.resumed`]: true } : {}),
      },
    },
    contextOf(ask.trace),
  );
  if (!span.isRecording()) return run(undefined);
  if (order.again) span.addEvent(`${RT}.resumed`, { [`${RT}.note`]: 'taken again after a restart or a move' });
  const active: Context = trace.setSpan(ROOT_CONTEXT, span);
  keepTurn(room, ask.id, span.spanContext());
  const started = performance.now();
  let first: number | undefined;
  const used = { input: 0, cached: 0, output: 0, calls: 0 };
  const traced: TurnTrace = {
    context: active,
    logFields: logFieldsOf(span.spanContext()),
    usage: (u) => {
      used.input += u.input;
      used.cached += u.cached;
      used.output += u.output;
      used.calls += 1;
    },
    text: (show) => (text) => {
      first ??= performance.now() - started;
      show(text);
    },
  };
  try {
    const outcome = await run(traced);
    span.setAttributes({
      [GEN_AI.inputTokens]: used.input,
      [GEN_AI.cachedTokens]: used.cached,
      [GEN_AI.outputTokens]: used.output,
      [`${RT}.calls`]: used.calls,
      ...(agent.price ? { [`${RT}.cost_usd`]: estimateCost(used, agent.price) } : {}),
      ...(first !== undefined ? { [`${RT}.ttft_ms`]: Math.round(first) } : {}),
      ...outcomeAttributes(outcome),
    });
    if (outcome.kind === 'failed' || outcome.kind === 'over-limit') {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: outcome.kind === 'failed' ? outcome.reason : 'spending limit',
      });
    }
    return outcome;
  } finally {
    span.end();
  }
}

function outcomeAttributes(outcome: TurnOutcome): Record<string, string | number | boolean> {
  switch (outcome.kind) {
    case 'reply': {
      const read = classifyReply(outcome.text);
      const reply = contentOf(outcome.text);
      return {
        [`${RT}.outcome`]: read.kind === 'message' ? 'reply' : read.kind,
        [`${RT}.tool_runs`]: outcome.toolRuns?.length ?? 0,
        ...(outcome.roundLimit ? { [`${RT}.round_limit`]: true } : {}),
        ...(reply !== undefined ? { [`${RT}.reply`]: reply } : {}),
      };
    }
    case 'failed':
      return { [`${RT}.outcome`]: 'failure', [`${RT}.failure`]: outcome.reason };
    case 'over-limit':
      return {
        [`${RT}.outcome`]: 'failure',
        [`${RT}.refusal`]: 'spending limit',
        [`${RT}.limit.scope`]: outcome.limit.scope,
        [`${RT}.limit.amount`]: outcome.limit.amount,
      };
    case 'stopped':
      return { [`${RT}.outcome`]: 'stopped' };
  }
}
