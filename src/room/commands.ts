/**
 * Rule 8: operator commands. `/pass` and `/reset` hand the room to the humans (or start it afresh), stopping the
 * turn being written and dropping the queue with one line naming whose questions were dropped; `/privacy` shows or
 * sets the room's mode. `/status` only reads the room (the shell answers it).
 */
import { questionsOf } from './asks.js';
import { tellDropped } from './control.js';
import { type Draft, same } from './draft.js';
import type { Command } from './events.js';
import { closeRequests } from './requests.js';
import type { Ask } from './state.js';

const PRIVACY_MODES = ['mentions', 'off'] as const;

/** The turn being written (not its reply being posted), with the batch it is part of. */
function writing(d: Draft): Ask[] {
  const current = d.state.current;
  if (!current || current.post !== undefined || current.stop) return [];
  return current.batch ? [...current.batch] : [current.ask];
}

/** Stops everything in the room; returns how many turns were stopped. */
function stopAll(d: Draft, why: string): number {
  const stopped = writing(d);
  const current = d.state.current;
  const drops = questionsOf([...stopped, ...d.state.queue, ...(d.state.batch?.asks ?? [])]);
  if (current && stopped.length > 0) {
    d.effect({ type: 'stop', ask: current.ask.id, reason: 'operator' });
    d.effect({ type: 'discard', ask: current.ask.id });
    d.set({ current: null });
  }
  d.set({ queue: [], batch: null });
  closeRequests(d);
  tellDropped(d, drops, why);
  return stopped.length;
}

/** Stops one agent's turn, if it is writing one. */
function stopAgent(d: Draft, agent: string): boolean {
  const current = d.state.current;
  const turns = writing(d);
  if (!current || !turns.some((ask) => same(ask.agent, agent))) return false;
  if (current.batch && current.batch.length > 1) {
    // One agent of a batched call: its answer will be skipped; the call goes on for the others.
    const batch = current.batch.filter((ask) => !same(ask.agent, agent));
    d.set({ current: { ...current, ask: batch[0] as Ask, batch } });
    return true;
  }
  d.effect({ type: 'stop', ask: current.ask.id, reason: 'operator' });
  d.set({ current: { ...current, stop: 'operator' } });
  return true;
}

export function command(d: Draft, c: Command): void {
  const answer = (text: string) => d.effect({ type: 'answer', command: c.id, text });
  if (!c.isOperator) {
    answer(`Only operators can use /${c.name}.`);
    return;
  }
  const arg = c.args.trim().replace(/^@/, '');
  if (c.name === 'privacy') {
    privacy(d, arg, answer);
    return;
  }
  if (c.name === 'status') return;
  const named = arg ? d.agent(arg) : undefined;
  if (arg && !named && !(c.name === 'reset' && arg === 'workspace')) {
    answer(`There is no agent named @${arg}. Agents: ${d.setup.agents.map((a) => `@${a.name}`).join(', ')}.`);
    return;
  }
  if (named) {
    const stopped = stopAgent(d, named);
    answer(
      c.name === 'pass'
        ? stopped
          ? `@${named} was stopped; the next agent may answer.`
          : `@${named} is not working.`
        : `@${named}'s turn in this room was stopped.`,
    );
    return;
  }
  switch (c.name) {
    case 'pass': {
      const stopped = stopAll(d, 'Stopped with /pass');
      d.record({ kind: 'hand-back', reason: '/pass' });
      d.set({ control: { holder: 'humans', count: 0, reason: '/pass' } });
      answer(
        `Control is with the humans${stopped > 0 ? ` (${stopped} agent turn${stopped > 1 ? 's' : ''} stopped)` : ''}.`,
      );
      return;
    }
    case 'reset': {
      stopAll(d, 'Stopped with /reset');
      d.set({ control: { holder: 'agents', count: 0 }, told: [], failed: [] });
      const wipe = arg === 'workspace';
      d.effect({ type: 'reset-sandbox', wipe });
      answer(
        wipe
          ? 'Room reset: turns stopped, counter cleared, sandbox and workspace removed.'
          : 'Room reset: turns stopped, counter cleared, sandbox removed (workspace kept).',
      );
      return;
    }
    case 'clear': {
      stopAll(d, 'Stopped with /clear');
      d.set({
        control: { holder: 'agents', count: 0 },
        humans: [],
        awaiting: {},
        lastText: {},
        agentPosts: [],
        told: [],
        failed: [],
      });
      d.effect({ type: 'clear-history' });
      answer('History of this room cleared.');
      return;
    }
  }
}

function privacy(d: Draft, arg: string, answer: (text: string) => void): void {
  const mode = arg.toLowerCase();
  if (!mode) {
    answer(`Privacy in this room: ${d.privacy}.`);
    return;
  }
  if (!PRIVACY_MODES.includes(mode as (typeof PRIVACY_MODES)[number])) {
    answer('Use /privacy mentions (agents see only the exchanges they are part of) or /privacy off.');
    return;
  }
  const chosen = mode as (typeof PRIVACY_MODES)[number];
  d.set({ privacy: chosen });
  d.write({ type: 'privacy', mode: chosen });
  answer(
    chosen === 'mentions'
      ? 'Privacy in this room: mentions. A message that mentions agents, and the replies to it, are shown only to its participants.'
      : 'Privacy in this room: off. Every agent sees every message.',
  );
}
