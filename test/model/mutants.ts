/**
 * Machines that each break one rule, by wrapping decide's inputs or outputs. The conformance check must catch every
 * one of them (mutants.test.ts): a suite that cannot tell them from the real machine proves nothing.
 */
import { decide } from '../../src/room/decide.js';
import type { Decision } from '../../src/room/effects.js';
import { extractMentions } from '../../src/room/text/mentions.js';
import type { Decide } from './machine.js';

const withState = (decision: Decision, patch: (state: Decision['state']) => Decision['state']): Decision => ({
  ...decision,
  state: patch(decision.state),
});

/** Rules 2.2 and 4.4 without activation: every agent is asked as an observer, `mention` agents too. */
export const ignoresActivation: Decide = (setup, state, event, context) =>
  decide({ ...setup, agents: setup.agents.map((a) => ({ ...a, activation: 'always' })) }, state, event, context);

/** Rule 5.2 forgotten: the room keeps its requests but not who answered them, so none completes. */
export const forgetsAnswers: Decide = (setup, state, event, context) =>
  withState(decide(setup, state, event, context), (s) => ({
    ...s,
    requests: s.requests.map((r) => ({ ...r, answers: [] })),
  }));

/** Rule 7.1 broken: a bridge line (a failure, a deadline) resets the count of agent messages in a row. */
export const lineResetsCount: Decide = (setup, state, event, context) => {
  const decision = decide(setup, state, event, context);
  const line = decision.writes.some((w) => w.type === 'message' && w.message.kind === 'system');
  return line ? withState(decision, (s) => ({ ...s, control: { ...s.control, count: 0 } })) : decision;
};

/** Rule 2.3 broken: a human's newer message drops every other human's queued question too. */
export const dropsOthersQuestions: Decide = (setup, state, event, context) => {
  if (event.type !== 'message' || event.message.kind !== 'human') return decide(setup, state, event, context);
  const author = event.message.author.toLowerCase();
  const queue = state.queue.filter((ask) => ask.questions.every((q) => q.human.toLowerCase() === author));
  return decide(setup, { ...state, queue }, event, context);
};

/** Rule 1.1 broken: a mention on a quoted line (`> @x wrote`) addresses x. */
export const wakesQuoted: Decide = (setup, state, event, context) => {
  if (event.type !== 'message' || event.message.kind !== 'human') return decide(setup, state, event, context);
  const quoted = event.message.text
    .split('\n')
    .filter((line) => /^ {0,3}>/.test(line))
    .map((line) => line.replace(/^ {0,3}>+/, ''))
    .join('\n');
  const names = extractMentions(
    quoted,
    setup.agents.map((a) => a.name),
  );
  if (names.length === 0) return decide(setup, state, event, context);
  const addressed = [...(event.message.addressed ?? []), ...names];
  return decide(setup, state, { ...event, message: { ...event.message, addressed } }, context);
};

/** Rule 2.2.2 broken: a human's message does not end the agents' wait for that human (they are woken again). */
export const keepsWaiting: Decide = (setup, state, event, context) => {
  const decision = decide(setup, state, event, context);
  if (event.type !== 'message' || event.message.kind !== 'human') return decision;
  return withState(decision, (s) => {
    const awaiting = { ...s.awaiting };
    for (const [agent, humans] of Object.entries(state.awaiting)) {
      awaiting[agent] = [...new Set([...(awaiting[agent] ?? []), ...humans])];
    }
    return { ...s, awaiting };
  });
};

/** Rule 8.1 broken: /pass and /reset leave a reply that waits for the platform waiting (it goes out later). */
export const keepsWaitingPosts: Decide = (setup, state, event, context) => {
  const decision = decide(setup, state, event, context);
  if (event.type !== 'command') return decision;
  const dropped = state.posts.filter(
    (post) => post.purpose === 'reply' && !decision.state.posts.some((left) => left.id === post.id),
  );
  if (dropped.length === 0) return decision;
  const current = state.current?.post !== undefined ? state.current : decision.state.current;
  return {
    ...decision,
    effects: decision.effects.filter((effect) => effect.type !== 'drop-post'),
    state: { ...decision.state, posts: [...dropped, ...decision.state.posts], current },
  };
};

/** Rule 16.3 broken: an outsider's message (history only) starts the count of agent messages in a row again. */
export const outsiderResetsCount: Decide = (setup, state, event, context) => {
  const decision = decide(setup, state, event, context);
  const outsider = event.type === 'message' && event.message.kind === 'human' && event.message.mayWake?.length === 0;
  if (!outsider || decision.state.control.holder !== 'agents') return decision;
  return withState(decision, (s) => ({ ...s, control: { ...s.control, count: 0 } }));
};

/** The card a /approve or /deny names, in the state before it. */
const cardOf = (state: Parameters<Decide>[1], args: string) => {
  const id = args
    .trim()
    .replace(/^\[|\]$/g, '')
    .toUpperCase();
  return (state.approvals ?? []).find((a) => a.id === id);
};

/** Rule 17.2 broken: any human may answer a card (as if they were the human who asked). */
export const anyHumanApproves: Decide = (setup, state, event, context) => {
  if (event.type !== 'command' || (event.command.name !== 'approve' && event.command.name !== 'deny'))
    return decide(setup, state, event, context);
  const root = cardOf(state, event.command.args)?.root;
  if (!root) return decide(setup, state, event, context);
  return decide(setup, state, { ...event, command: { ...event.command, userId: root.id } }, context);
};

/** Rule 17.2 broken: the root is recognised by name, so a namesake (another id) may answer its card. */
export const approvesByName: Decide = (setup, state, event, context) => {
  if (event.type !== 'command' || (event.command.name !== 'approve' && event.command.name !== 'deny'))
    return decide(setup, state, event, context);
  const root = cardOf(state, event.command.args)?.root;
  if (!root || root.name.toLowerCase() !== event.command.user.toLowerCase())
    return decide(setup, state, event, context);
  return decide(setup, state, { ...event, command: { ...event.command, userId: root.id } }, context);
};

/** Rule 17.5 broken: a turn waiting for its card keeps the room, so another human's question waits behind it. */
export const neverParks: Decide = (setup, state, event, context) => {
  const decision = decide(setup, state, event, context);
  const parked = decision.effects.find((e) => e.type === 'stop' && e.reason === 'approval');
  if (parked?.type !== 'stop' || !state.current || state.current.ask.id !== parked.ask) return decision;
  // Undo the park: the turn stays, the queue as it was before the decision's own additions, nothing else started.
  const ask = decision.state.queue.find((q) => q.id === parked.ask);
  if (!ask) return decision;
  return {
    ...decision,
    effects: decision.effects.filter(
      (e) => !(e.type === 'stop' && e.reason === 'approval') && e.type !== 'ask' && e.type !== 'discard',
    ),
    state: {
      ...decision.state,
      current: state.current,
      queue: [
        ...decision.state.queue.filter((q) => q.id !== parked.ask),
        ...(decision.state.current && decision.state.current.ask.id !== parked.ask ? [decision.state.current.ask] : []),
      ],
    },
  };
};
