/**
 * A batched observers' call (BATCHING=on) as a turn span: one `chat <model>` span for the call (the GenAI
 * conventions, as a turn's), in the trace of the message that woke its first observer, with the agents it answered
 * for as attributes and each one's share as an event (its part of the call's tokens, what it made of its turn). An
 * observer woken by another message's trace is linked. The posts of the replies hang below it.
 */
import { type Link, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { LlmUsage } from '../llm/usage.js';
import { ATTR_SERVER_ADDRESS } from './attributes.js';
import { keepTurn } from './book.js';
import { contextOf, spanContextOf } from './context.js';
import { fail } from './inbound.js';
import { GEN_AI, RT, tracer } from './names.js';
import { tracing } from './switch.js';

/** One observer of the call: its agent, its ask in the room, and the trace its ask carries. */
interface Member {
  readonly agent: string;
  readonly ask: number;
  readonly trace?: string | undefined;
}

/** What the call's code tells its span (nothing, cheaply, when there is none). */
export interface BatchTrace {
  /** An agent's share of the call's usage. */
  usage(agent: string, usage: LlmUsage): void;
  /** How each agent's turn came out (`reply`, `pass`, `alone`: asked again on its own), and the call ends. */
  end(outcomes: ReadonlyMap<string, string>, error?: unknown): void;
}

export function traceBatch(
  room: string,
  call: { readonly model: string; readonly endpoint: string },
  members: readonly Member[],
): BatchTrace | undefined {
  if (!tracing) return undefined;
  const [first] = members;
  if (!first?.trace || !spanContextOf(first.trace)) return undefined;
  const links: Link[] = [];
  for (const member of members) {
    const origin = member.trace === first.trace ? undefined : spanContextOf(member.trace);
    if (origin && !links.some((l) => l.context.spanId === origin.spanId)) {
      links.push({ context: origin, attributes: { [`${RT}.link`]: 'batch' } });
    }
  }
  let host: string | undefined;
  try {
    host = new URL(call.endpoint).hostname;
  } catch {
    host = undefined;
  }
  const span = tracer().startSpan(
    `chat ${call.model}`,
    {
      kind: SpanKind.CLIENT,
      links,
      attributes: {
        [GEN_AI.operation]: 'chat',
        [GEN_AI.model]: call.model,
        ...(host ? { [ATTR_SERVER_ADDRESS]: host } : {}),
        [`${RT}.room`]: room,
        [`${RT}.batch`]: true,
        [`${RT}.agents`]: members.map((m) => m.agent),
        [`${RT}.asks`]: members.map((m) => m.ask),
        [`${RT}.situation`]: 'observe',
      },
    },
    contextOf(first.trace),
  );
  if (!span.isRecording()) return undefined;
  // Each observer's reply is posted below the call that wrote it.
  for (const member of members) keepTurn(room, member.ask, span.spanContext());
  const shares = new Map<string, { input: number; cached: number; output: number }>();
  return {
    usage: (agent, usage) => {
      const share = shares.get(agent) ?? { input: 0, cached: 0, output: 0 };
      share.input += usage.input;
      share.cached += usage.cached;
      share.output += usage.output;
      shares.set(agent, share);
    },
    end: (outcomes, error) => {
      const total = { input: 0, cached: 0, output: 0 };
      for (const member of members) {
        const share = shares.get(member.agent) ?? { input: 0, cached: 0, output: 0 };
        total.input += share.input;
        total.cached += share.cached;
        total.output += share.output;
        span.addEvent(`${RT}.share`, {
          [GEN_AI.agentName]: member.agent,
          [GEN_AI.inputTokens]: share.input,
          [GEN_AI.cachedTokens]: share.cached,
          [GEN_AI.outputTokens]: share.output,
          [`${RT}.outcome`]: outcomes.get(member.agent) ?? 'alone',
        });
      }
      span.setAttributes({
        [GEN_AI.inputTokens]: total.input,
        [GEN_AI.cachedTokens]: total.cached,
        [GEN_AI.outputTokens]: total.output,
        [`${RT}.outcomes`]: members.map((m) => `${m.agent}:${outcomes.get(m.agent) ?? 'alone'}`),
      });
      if (error !== undefined) fail(span, error);
      else if ([...outcomes.values()].every((o) => o === 'alone')) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the batch answer could not be used' });
      }
      span.end();
    },
  };
}
