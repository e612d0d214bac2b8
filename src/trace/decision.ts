/**
 * A decision's span: around `decide` and the store's commit of what it wrote, in the trace of the message (or the
 * turn) the event belongs to. Its attributes are read from the decision's records — the same records the console's
 * "why" view shows and /status counts — never recomputed here: who was asked, in which role and order, who was not
 * and why, a hand-back and its reason (a turn limit), questions dropped, a pass, a failure, a spending refusal.
 */
import { type Context, context, type Span, trace } from '@opentelemetry/api';
import type { Decision, DecisionRecord } from '../room/effects.js';
import type { RoomEvent } from '../room/events.js';
import type { RoomState, Turn } from '../room/state.js';
import { contextOf } from './context.js';
import { fail } from './inbound.js';
import { RT, tracer } from './names.js';
import { tracing } from './switch.js';

type Input = RoomEvent extends infer E ? (E extends unknown ? Omit<E, 'now'> : never) : never;

function askOf(state: RoomState, id: number): Turn | undefined {
  if (state.current?.ask.id === id) return state.current.ask;
  return state.batch?.asks.find((a) => a.id === id) ?? state.queue.find((a) => a.id === id);
}

/** The trace an event belongs to, from what the room keeps: none for events no message's trace leads to. */
export function traceOfEvent(event: Input, state: RoomState): string | undefined {
  switch (event.type) {
    case 'message':
      return event.message.trace;
    case 'command':
      return event.command.trace;
    case 'edit':
      return event.edit.trace;
    case 'deadline':
      return state.requests.find((r) => r.id === event.request)?.opener.trace;
    case 'answer':
      return askOf(state, event.ask)?.trace;
    case 'batch':
      return event.answers[0] ? askOf(state, event.answers[0].ask)?.trace : undefined;
    case 'posted':
    case 'post-failed': {
      const ask = state.posts.find((p) => p.id === event.post)?.ask;
      return ask === undefined ? undefined : askOf(state, ask)?.trace;
    }
    case 'action':
      return event.action.kind === 'post' ? event.action.from.trace : undefined;
    case 'approval':
      return askOf(state, event.request.ask)?.trace;
    default:
      return undefined;
  }
}

export interface DecisionTrace {
  /** The decision's records, as attributes and events of the span. */
  decided(decision: Decision): void;
  /** One try at committing the decision's writes, as a child span. */
  commit<T>(tries: number, write: () => Promise<T>): Promise<T>;
  /** Runs `fn` (the effects) with the decision's span active: the posts and turns it starts hang below it. */
  within(fn: () => void): void;
}

/**
 * Runs `take` (decide, commit, effects) under a decision span when the event belongs to a traced message; else runs
 * it alone (no span, no cost beyond the lookup).
 */
export async function traceDecision<T>(
  room: string,
  event: Input | null,
  state: RoomState,
  take: (traced: DecisionTrace | undefined) => Promise<T>,
): Promise<T> {
  if (!tracing) return take(undefined);
  const parent = event ? traceOfEvent(event, state) : undefined;
  if (parent === undefined || event === null) return take(undefined);
  const attributes: Record<string, string | number> = { [`${RT}.room`]: room, [`${RT}.event`]: event.type };
  if (event.type === 'deadline') attributes[`${RT}.request.id`] = event.request;
  // A message's, a command's, an edit's decision is a span of its own, and so is a deadline firing (they are rare).
  const own =
    event.type === 'message' || event.type === 'command' || event.type === 'edit' || event.type === 'deadline';
  // An outcome's decision (a turn's answer, a post's) is a span only when it recorded why (fewer spans per message).
  if (!own) return lazyDecision(contextOf(parent), attributes, take);
  const span = tracer().startSpan('decide', { attributes }, contextOf(parent));
  if (!span.isRecording()) return take(undefined);
  const active = trace.setSpan(context.active(), span);
  try {
    const taken = await take(decisionTrace(span, active));
    span.setAttribute(`${RT}.taken`, String(taken));
    return taken;
  } catch (error) {
    fail(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The decision on an outcome: its span made once `decide` recorded something, backdated to the decision's start. */
async function lazyDecision<T>(
  parent: Context,
  attributes: Record<string, string | number>,
  take: (traced: DecisionTrace | undefined) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  let span: Span | undefined;
  const traced: DecisionTrace = {
    decided: (decision) => {
      if (!decision.effects.some((effect) => effect.type === 'record')) return;
      span = tracer().startSpan('decide', { attributes, startTime: started }, parent);
      for (const effect of decision.effects) if (effect.type === 'record') note(span, effect.record);
    },
    commit: (_tries, write) => (span ? timed(span, write) : write()),
    within: (fn) => context.with(span ? trace.setSpan(parent, span) : parent, fn),
  };
  try {
    const taken = await take(traced);
    span?.setAttribute(`${RT}.taken`, String(taken));
    return taken;
  } catch (error) {
    if (span) fail(span, error);
    throw error;
  } finally {
    span?.end();
  }
}

function decisionTrace(span: Span, active: Context): DecisionTrace {
  return {
    decided: (decision) => {
      for (const effect of decision.effects) if (effect.type === 'record') note(span, effect.record);
    },
    commit: async (tries, write) => {
      // A message's or a command's commit is a span of its own (the store's part of the arrival).
      const commit = tracer().startSpan('store commit', { attributes: { [`${RT}.try`]: tries } }, active);
      try {
        const result = await write();
        commit.setAttribute(`${RT}.result`, typeof result === 'string' ? result : 'stored');
        return result;
      } catch (error) {
        fail(commit, error);
        throw error;
      } finally {
        commit.end();
      }
    },
    within: (fn) => context.with(active, fn),
  };
}

/** The store's time for a decision's writes, on the decision's span. */
async function timed<T>(span: Span, write: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await write();
  } finally {
    span.setAttribute(`${RT}.commit_ms`, Math.round((performance.now() - started) * 1000) / 1000);
  }
}

/** One record of why, on the decision's span: the routing as attributes, every record as an event. */
function note(span: Span, record: DecisionRecord): void {
  switch (record.kind) {
    case 'routed':
      span.setAttributes({
        [`${RT}.message.seq`]: record.seq,
        // `agent:role`, in the order they are asked.
        [`${RT}.asked`]: [...record.woken],
        ...(record.skipped && record.skipped.length > 0
          ? { [`${RT}.skipped`]: record.skipped.map((s) => `${s.agent}:${s.why}`) }
          : {}),
        ...(record.refused
          ? { [`${RT}.refused`]: record.refused.agents.map((a) => `${a}:${record.refused?.why}`) }
          : {}),
      });
      span.addEvent(`${RT}.routed`, { [`${RT}.asked`]: [...record.woken] });
      return;
    case 'hand-back':
      span.setAttribute(`${RT}.hand_back`, record.reason);
      span.addEvent(`${RT}.hand_back`, { [`${RT}.reason`]: record.reason });
      return;
    case 'dropped':
      span.setAttribute(
        `${RT}.dropped`,
        record.drops.map((d) => `${d.agent}:${d.humans.join('+')}`),
      );
      span.addEvent(`${RT}.dropped`, { [`${RT}.dropped`]: record.drops.map((d) => d.agent) });
      return;
    case 'passed':
      span.addEvent(`${RT}.passed`, { [`${RT}.agent`]: record.agent });
      return;
    case 'failed':
    case 'stopped':
      span.addEvent(`${RT}.${record.kind}`, { [`${RT}.agent`]: record.agent, [`${RT}.reason`]: record.reason });
      return;
    case 'request':
      span.addEvent(`${RT}.request`, { [`${RT}.request.id`]: record.id, [`${RT}.request.status`]: record.status });
      return;
    case 'approval':
      span.addEvent(`${RT}.approval`, {
        [`${RT}.approval.id`]: record.id,
        [`${RT}.agent`]: record.agent,
        [`${RT}.tool`]: record.tool,
        [`${RT}.approval.status`]: record.status,
      });
      return;
  }
}
