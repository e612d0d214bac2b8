/**
 * The tracing steps one message takes on the bridge's route, alone: its root, the decision with its records and
 * store commit, the turn with its usage, the post; with the spans exported as in the bridge (whatever provider is
 * installed). Measures the CPU they cost per message, with tracing on and, alternating, off.
 */
import type { TurnOrder } from '../../src/room/effects.js';
import type { RoomState } from '../../src/room/state.js';
import { traceDecision } from '../../src/trace/decision.js';
import { traceInbound } from '../../src/trace/inbound.js';
import { tracePost } from '../../src/trace/post.js';
import { setTracing } from '../../src/trace/switch.js';
import { traceTurn } from '../../src/trace/turn.js';

const ROOM = 'discord:general';
const state = { requests: [], queue: [], current: null, posts: [] } as unknown as RoomState;
const AGENT = { name: 'data', model: 'data', endpoint: 'http://127.0.0.1:1/v1' };

async function oneMessage(seq: number): Promise<void> {
  const arrival = {
    platform: 'discord',
    channel: 'general',
    messageId: String(seq),
    author: { kind: 'human', name: 'alice' },
    text: 'question',
    trace: undefined as string | undefined,
  };
  await traceInbound(arrival, async (event) => {
    const message = { type: 'message', message: { trace: event.trace } } as never;
    return traceDecision(ROOM, message, state, async (traced) => {
      const routed = { kind: 'routed', seq, author: 'alice', woken: ['data:always'] };
      traced?.decided({ effects: [{ type: 'record', record: routed }] } as never);
      await traced?.commit(1, async () => 'done');
      const ask = { id: seq, agent: 'data', reason: 'always', trace: event.trace };
      const order = { ask, situation: { kind: 'asked' } } as unknown as TurnOrder;
      await traceTurn(ROOM, order, AGENT, async (turn) => {
        turn?.usage({ input: 400, cached: 0, output: 3 });
        return { kind: 'reply', text: 're: question' };
      });
      const post = { id: seq, ask: seq, agent: 'data', text: 're', purpose: 'reply', at: 0 } as const;
      tracePost({ key: ROOM, platform: 'discord' }, post)?.end('posted');
      return 'done';
    });
  });
}

/** CPU µs per message of the route's tracing steps, on and off, over `rounds` alternating rounds of `count`. */
export async function traceStepsCost(count: number, rounds: number): Promise<{ on: number; off: number }> {
  const total = { on: 0, off: 0 };
  let seq = 0;
  for (let round = 0; round < rounds * 2; round += 1) {
    const on = round % 2 === 0;
    setTracing(on);
    const started = process.cpuUsage();
    for (let i = 0; i < count; i += 1) {
      seq += 1;
      await oneMessage(seq);
    }
    const used = process.cpuUsage(started);
    total[on ? 'on' : 'off'] += (used.user + used.system) / count / rounds;
  }
  return total;
}
