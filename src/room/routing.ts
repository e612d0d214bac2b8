/**
 * Who answers a message, in which order and in which situation. Pure: the shell runs the turns.
 */
import { stripCode } from './mentions.js';
import { canSee } from './privacy.js';
import type { AgentProfile } from './types.js';
import { isAwaiting, shouldWake, type WakeInput } from './wake.js';

/** Why an agent was woken (logged at debug level, and it picks the situation). */
export type WakeReason = 'direct' | 'awaiting' | 'addressed' | 'always' | 'mentioned';

export interface Wake {
  readonly agent: string;
  readonly reason: WakeReason;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The agents to ask about `message`, in order, each once:
 * 1. in a DM, its agent;
 * 2. agents whose last message asked this author (agent or human) — the answer they waited for;
 * 3. the agents a human message addresses, in the order it names them;
 * 4. every other agent whose shouldWake holds, in configured order.
 * Never the author, never an agent that cannot see the message, never one in `exclude`.
 */
export function planWakes(
  agents: readonly AgentProfile[],
  message: WakeInput,
  history: readonly WakeInput[],
  options: { readonly directAgent?: string | null; readonly exclude?: readonly string[] } = {},
): Wake[] {
  const excluded = (name: string) => (options.exclude ?? []).some((n) => same(n, name));
  const eligible = agents.filter(
    (agent) =>
      !excluded(agent.name) &&
      !(message.kind === 'agent' && same(agent.name, message.author)) &&
      canSee(agent.name, message),
  );
  if (message.kind === 'system') return [];
  if (options.directAgent) {
    const owner = eligible.find((agent) => same(agent.name, options.directAgent ?? ''));
    return owner ? [{ agent: owner.name, reason: 'direct' }] : [];
  }
  const plan: Wake[] = [];
  const add = (name: string, reason: WakeReason) => {
    if (!plan.some((w) => same(w.agent, name))) plan.push({ agent: name, reason });
  };
  for (const agent of eligible) if (isAwaiting(agent, message, history)) add(agent.name, 'awaiting');
  if (message.kind === 'human') {
    for (const name of message.mentions) {
      const agent = eligible.find((a) => same(a.name, name));
      if (agent) add(agent.name, 'addressed');
    }
  }
  for (const agent of eligible) {
    if (!shouldWake(agent, message, history)) continue;
    add(agent.name, agent.activation === 'always' ? 'always' : 'mentioned');
  }
  return plan;
}

/** True when the text asks something: a `?` outside code. */
export function asksQuestion(text: string): boolean {
  return stripCode(text).includes('?');
}

/**
 * The people whose names in an agent's message ask for a reply: the agents and humans it mentions, less
 * itself and less the people it answers — naming who asked you, in your answer, is the answer. A human
 * it answers is asked all the same when the message asks a question ("@ann which file?"): humans do not
 * ping-pong, and the agent should hear their reply.
 */
export function requestsOf(input: {
  readonly agents: readonly string[];
  readonly humans?: readonly string[];
  readonly author: string;
  readonly answering: readonly string[];
  readonly text?: string;
}): string[] {
  const answered = (name: string) => input.answering.some((person) => same(person, name));
  const question = input.text !== undefined && asksQuestion(input.text);
  return [
    ...input.agents.filter((name) => !same(name, input.author) && !answered(name)),
    ...(input.humans ?? []).filter((name) => !same(name, input.author) && (!answered(name) || question)),
  ];
}
