/**
 * The platforms the generated conversations are played on, with the conversations each can carry: Discord carries
 * every kind of step (and here an edit right after a human spoke in a DM edits in that DM, where the generator makes
 * none);
 * the terminal room has one human, so its conversations are those of worlds with one.
 */
import type fc from 'fast-check';
import { type Case, caseArb } from '../../model/generate.js';
import type { Step } from '../../model/script.js';
import { ConsoleStage } from './console-shell.js';
import { DiscordStage } from './discord-shell.js';
import type { Stage } from './run-shell.js';

export interface Platform {
  readonly stage: () => Promise<Stage>;
  readonly arbitrary: fc.Arbitrary<Case>;
}

/** The text with every mention of another agent than `own` made one of `own`. */
function namingOnly(text: string, c: Case, own: string): string {
  const others = c.world.agents.map((a) => a.name).filter((name) => name !== own);
  if (others.length === 0) return text;
  return text.replace(new RegExp(`@(${others.join('|')})(?![\\p{L}\\p{N}_])`, 'giu'), `@${own}`);
}

/**
 * An edit made after a human last spoke in a DM goes to that DM, naming the DM's agent wherever it named another:
 * the rules let an edit in a DM ask another agent there, where on Discord its bot cannot post (whether it should
 * ask anyone there is a question for the rules, not for the bridge).
 */
function editsInDms(c: Case): Case {
  let last: string | undefined;
  const steps = c.steps.map((step): Step => {
    if (step.kind === 'say') last = step.room;
    if (step.kind !== 'edit' || !last?.startsWith('chat:dm-')) return step;
    const agent = /^chat:dm-([^-]+)-/.exec(last)?.[1] ?? '';
    return { ...step, room: last, text: namingOnly(step.text, c, agent) };
  });
  return { ...c, steps };
}

/**
 * The bridges played here have no access policy and seat the generator's usual people: the worlds with one (and
 * their outsiders) are played through the fakes in test/discord, test/slack and the attack corpus instead.
 */
/**
 * Rule 17's steps (a turn holding a tool call, /approve and /deny, a card's deadline) are played on the model and the
 * machine only: the fake model server here makes no call that needs approval; test/discord and test/access play the
 * cards through the fakes.
 */
const withoutApprovals = (c: Case): Case => ({
  ...c,
  steps: c.steps.filter(
    (s) =>
      s.kind !== 'approval-asked' &&
      s.kind !== 'approval-expires' &&
      !(s.kind === 'command' && (s.name === 'approve' || s.name === 'deny')),
  ),
});

const cases = caseArb.filter((c) => c.world.access === undefined).map(withoutApprovals);

export const PLATFORMS = {
  discord: { stage: () => DiscordStage.start(), arbitrary: cases.map(editsInDms) },
  console: { stage: () => ConsoleStage.start(), arbitrary: cases.filter((c) => c.world.humans.length === 1) },
} satisfies Record<string, Platform>;

export type PlatformName = keyof typeof PLATFORMS;
