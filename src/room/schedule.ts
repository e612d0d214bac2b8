/**
 * The queue's pace: one turn at a time per room. When nothing is being written or posted, and the next ask is not
 * waiting for a catch-up, it starts — or, with BATCHING on, it and the observers after it about the same message
 * start as one batched call. A batch's answers are then applied one at a time, in configured order.
 */

import { parkWaiting, waitsForCard } from './approvals.js';
import { answersHumans, isObserver } from './asks.js';
import { order, peopleOf, started } from './control.js';
import { type Draft, same } from './draft.js';
import { passTurn, reply } from './outcomes.js';
import { answerRequest } from './requests.js';
import type { Turn } from './state.js';

const failedHere = (d: Draft, agent: string) => d.state.failed.some((name) => same(name, agent));

/** The observers that may share a batched call with `first`: the next queued observers about the same message. */
function batchable(d: Draft, first: Turn): Turn[] {
  const { setup } = d;
  const group = setup.agents.find((a) => same(a.name, first.agent))?.batchGroup;
  // Never batched: a DM, a private chat, a private exchange (the message has an audience).
  if (!setup.batching || setup.kind !== 'room' || first.audience !== null || !group || !isObserver(first)) return [];
  const mates: Turn[] = [];
  for (const ask of d.state.queue) {
    if (!isObserver(ask) || ask.about !== first.about || ask.held || waitsForCard(d, ask.id)) break;
    if (failedHere(d, ask.agent)) continue;
    if (setup.agents.find((a) => same(a.name, ask.agent))?.batchGroup !== group) break;
    mates.push(ask);
  }
  return mates;
}

/** Starts the next ask when the room is free. */
export function advance(d: Draft): void {
  parkWaiting(d);
  for (;;) {
    const { state } = d;
    // Rule 11: while a catch-up runs the room holds, so a backlog is answered as one conversation, oldest first.
    if (state.current || state.posts.length > 0 || state.holding) return;
    if (state.batch) {
      if (!applyBatchAnswer(d)) return; // waiting for the batched call
      continue;
    }
    const at = state.queue.findIndex((ask) => !ask.held && !waitsForCard(d, ask.id));
    if (at < 0) return;
    const ask = state.queue[at] as Turn;
    d.set({ queue: state.queue.filter((_, i) => i !== at) });
    if (failedHere(d, ask.agent)) {
      // Its model failed earlier in this round: the requests it was asked in are not kept waiting.
      for (const id of ask.requests) {
        answerRequest(d, id, {
          participant: ask.agent,
          text: 'its model failed earlier in this round',
          outcome: 'failed',
        });
      }
      continue;
    }
    if (state.control.holder === 'humans') {
      if (!answersHumans(ask)) continue;
      // A human asked after the hand-back's turn began: they are answered, and the agents have control again. The
      // count goes on from the hand-back's 0 (a reply that waited for the platform and landed since counts, 6.4).
      d.set({ control: { holder: 'agents', count: state.control.count } });
    }
    const mates = batchable(d, ask);
    if (mates.length > 0) {
      const asks = [ask, ...mates].map((a) => started(d, a));
      d.set({
        queue: d.state.queue.filter((q) => !mates.includes(q)),
        batch: { asks, answers: [], seq: d.state.seq, id: ask.id },
      });
      d.effect({ type: 'ask', turns: asks.map((a) => order(d, a)) });
      return;
    }
    const next = started(d, ask);
    d.set({ current: { ask: next } });
    // The requester resumes now, once: its request is closed.
    if (next.resume) d.write({ type: 'request-status', id: next.resume.id, status: 'closed' });
    d.effect({ type: 'ask', turns: [order(d, next)] });
    return;
  }
}

/**
 * Applies the next batched answer, in configured order; false while it has not come yet. An answer about a room a
 * human spoke in since is dropped with the rest of the batch (they give way, as queued observers do); one about a
 * room that changed otherwise is asked again, on its own; `alone` (it wants its tools, or no batch could take it)
 * is asked on its own too; a pass is a pass (3.1).
 */
function applyBatchAnswer(d: Draft): boolean {
  const batch = d.state.batch;
  const [ask, ...rest] = batch?.asks ?? [];
  if (!batch || !ask) {
    d.set({ batch: null });
    return true;
  }
  const answer = batch.answers.find((a) => a.ask === ask.id);
  if (!answer) return false;
  d.set({ batch: rest.length > 0 ? { ...batch, asks: rest } : null });
  if (failedHere(d, ask.agent)) return true;
  if (d.state.lastHuman > batch.seq) {
    if (d.state.batch) d.effect({ type: 'stop', ask: batch.id, reason: 'control' });
    d.set({ batch: null });
    return true;
  }
  const { answer: said } = answer;
  if (said.kind === 'alone' || d.state.seq > batch.seq) {
    const next = { ...ask, startedAt: d.state.seq, people: peopleOf(d, ask) };
    d.set({ current: { ask: next } });
    d.effect({ type: 'ask', turns: [order(d, next)] });
    return true;
  }
  d.set({ current: { ask } });
  if (said.kind === 'pass') {
    passTurn(d, ask);
    return true;
  }
  reply(d, { ask }, said.text, false);
  const batchLeft = d.state.batch;
  if (d.state.current?.post !== undefined && batchLeft) {
    // Its reply ends the round: the observers after it are not asked (those still waiting are withdrawn now).
    d.effect({ type: 'stop', ask: batchLeft.id, reason: 'control' });
    d.set({ batch: null });
  }
  return true;
}
