/**
 * Rule 8: operator commands. `/pass` and `/reset` hand the room to the humans (or start it afresh), stopping the
 * turn being written, dropping the posts still waiting to reach the platform, and dropping the queue with one line
 * naming whose questions were dropped; `/privacy` shows or sets the room's mode. `/status` only reads the room (the
 * shell answers it).
 */
import { answerApproval, denyAll } from './approvals.js';
import { questionsOf } from './asks.js';
import { tellDropped } from './control.js';
import { type Draft, same } from './draft.js';
import type { Command } from './events.js';
import { closeRequests } from './requests.js';
import type { Turn } from './state.js';

const PRIVACY_MODES = ['mentions', 'off'] as const;

/** The turns being written (not a reply being posted): the current turn, or a batched call's observers. */
function writing(d: Draft): Turn[] {
  const current = d.state.current;
  const turn = current && current.post === undefined && !current.stop ? [current.ask] : [];
  return [...turn, ...(d.state.batch?.asks ?? [])];
}

/**
 * Rule 8.1: posts not yet on the platform (one that keeps failing is tried again until then) are dropped: a reply is
 * not posted (its turn is over), an action's post fails for its agent, a line is not shown. Returns how many.
 */
function dropPosts(d: Draft): number {
  const posts = d.state.posts;
  for (const post of posts) {
    d.effect({ type: 'drop-post', post: post.id });
    if (post.purpose === 'action' && post.call) {
      d.effect({
        type: 'action-result',
        call: post.call,
        result: { kind: 'failed', reason: 'an operator dropped it before it could be posted' },
      });
    }
  }
  const current = d.state.current;
  if (posts.length > 0) d.set({ posts: [], current: current?.post !== undefined ? null : current });
  return posts.length;
}

/** Stops everything in the room; returns how many turns were stopped and posts dropped. */
function stopAll(d: Draft, why: string): { stopped: number; dropped: number } {
  denyAll(d, `${why.replace(/^Stopped with /, '')} stopped the turn`);
  const dropped = dropPosts(d);
  const stopped = writing(d);
  const current = d.state.current;
  // The questions not yet started are named (the turn stopped was stopped by the operator, in sight of the room).
  const drops = questionsOf([...d.state.queue, ...(d.state.batch?.asks ?? [])]);
  if (current && current.post === undefined && !current.stop) {
    d.effect({ type: 'stop', ask: current.ask.id, reason: 'operator' });
    d.effect({ type: 'discard', ask: current.ask.id });
    d.set({ current: null });
  }
  if (d.state.batch) d.effect({ type: 'stop', ask: d.state.batch.id, reason: 'operator' });
  d.set({ queue: [], batch: null });
  closeRequests(d);
  tellDropped(d, drops, why);
  return { stopped: stopped.length, dropped };
}

/** The answer's note about posts dropped (none: nothing). */
const droppedPosts = (dropped: number) =>
  dropped === 0 ? '' : `${dropped} waiting post${dropped > 1 ? 's' : ''} dropped`;

/** Stops one agent's turn, if it is writing one. */
function stopAgent(d: Draft, agent: string): boolean {
  const current = d.state.current;
  const batch = d.state.batch;
  if (batch?.asks.some((ask) => same(ask.agent, agent))) {
    // One agent of a batched call: its answer is skipped; the call goes on for the others.
    const asks = batch.asks.filter((ask) => !same(ask.agent, agent));
    d.set({ batch: asks.length > 0 ? { ...batch, asks } : null });
    if (asks.length === 0) d.effect({ type: 'stop', ask: batch.id, reason: 'operator' });
    return true;
  }
  if (!current || current.post !== undefined || current.stop || !same(current.ask.agent, agent)) return false;
  d.effect({ type: 'stop', ask: current.ask.id, reason: 'operator' });
  d.set({ current: { ...current, stop: 'operator' } });
  return true;
}

export function command(d: Draft, c: Command): void {
  // Rule 17: the human who asked may answer their own card, besides operators (the card's rule, not the command's).
  if (c.name === 'approve' || c.name === 'deny') {
    d.effect({ type: 'answer', command: c.id, text: answerApproval(d, c) });
    return;
  }
  if (c.isOperator && c.name === 'status') {
    d.effect({ type: 'status', command: c.id });
    return;
  }
  // Spending limits are the bridge's, not the room's: the shell shows or sets them (rule 15).
  if (c.isOperator && c.name === 'budget') {
    d.effect({ type: 'budget', command: c.id, args: c.args.trim() });
    return;
  }
  const text = c.isOperator ? carryOut(d, c) : `Only operators can use /${c.name}.`;
  d.effect({ type: 'answer', command: c.id, text });
}

/** Carries out an operator's command; returns its answer. */
function carryOut(d: Draft, c: Command): string {
  const arg = c.args.trim().replace(/^@/, '');
  if (c.name === 'privacy') return privacy(d, arg);
  const named = arg ? d.agent(arg) : undefined;
  if (arg && !named && !(c.name === 'reset' && arg === 'workspace')) {
    return `There is no agent named @${arg}. Agents: ${d.setup.agents.map((a) => `@${a.name}`).join(', ')}.`;
  }
  if (named) {
    const stopped = stopAgent(d, named);
    if (c.name === 'pass') {
      return stopped ? `@${named} was stopped; the next agent may answer.` : `@${named} is not working.`;
    }
    return `@${named}'s turn in this room was stopped.`;
  }
  switch (c.name) {
    case 'pass': {
      const { stopped, dropped } = stopAll(d, 'Stopped with /pass');
      d.record({ kind: 'hand-back', reason: '/pass' });
      d.set({ control: { holder: 'humans', count: 0, reason: '/pass' } });
      // Rule 8.6: the humans here did not see a command given from the operator console.
      if (c.fromConsole) d.line(`Control is with the humans: ${c.user} used /pass from the operator console.`);
      const notes = [
        stopped > 0 ? `${stopped} agent turn${stopped > 1 ? 's' : ''} stopped` : '',
        droppedPosts(dropped),
      ];
      const said = notes.filter(Boolean).join('; ');
      return `Control is with the humans${said ? ` (${said})` : ''}.`;
    }
    case 'reset': {
      const { dropped } = stopAll(d, 'Stopped with /reset');
      d.set({ control: { holder: 'agents', count: 0 }, told: [], failed: [] });
      const wipe = arg === 'workspace';
      d.effect({ type: 'reset-sandbox', wipe });
      if (c.fromConsole) d.line(`This room was reset: ${c.user} used /reset from the operator console.`);
      const posts = dropped > 0 ? ` ${droppedPosts(dropped)},` : '';
      return wipe
        ? `Room reset: turns stopped,${posts} counter cleared, sandbox and workspace removed.`
        : `Room reset: turns stopped,${posts} counter cleared, sandbox removed (workspace kept).`;
    }
    case 'status':
    case 'budget':
    case 'approve':
    case 'deny':
      return '';
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
      return 'History of this room cleared.';
    }
  }
}

function privacy(d: Draft, arg: string): string {
  const mode = arg.toLowerCase();
  if (!mode) return `Privacy in this room: ${d.privacy}.`;
  if (!PRIVACY_MODES.includes(mode as (typeof PRIVACY_MODES)[number])) {
    return 'Use /privacy mentions (agents see only the exchanges they are part of) or /privacy off.';
  }
  const chosen = mode as (typeof PRIVACY_MODES)[number];
  d.set({ privacy: chosen });
  d.write({ type: 'privacy', mode: chosen });
  return chosen === 'mentions'
    ? 'Privacy in this room: mentions. A message that mentions agents, and the replies to it, are shown only to its participants.'
    : 'Privacy in this room: off. Every agent sees every message.';
}
