/**
 * The platforms the generated conversations are played on, with the conversations each can carry: Discord carries
 * every kind of step (and here half the edits go to the DM a human spoke in last, where the generator makes none);
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

/** Every second edit goes to the DM a human spoke in last before it (if any). */
function editsInDms(c: Case): Case {
  let dm: string | undefined;
  let edits = 0;
  const steps = c.steps.map((step): Step => {
    if (step.kind === 'say' && step.room.startsWith('chat:dm-')) dm = step.room;
    if (step.kind !== 'edit' || edits++ % 2 === 0 || !dm) return step;
    return { ...step, room: dm };
  });
  return { ...c, steps };
}

export const PLATFORMS = {
  discord: { stage: () => DiscordStage.start(), arbitrary: caseArb.map(editsInDms) },
  console: { stage: () => ConsoleStage.start(), arbitrary: caseArb.filter((c) => c.world.humans.length === 1) },
} satisfies Record<string, Platform>;

export type PlatformName = keyof typeof PLATFORMS;
