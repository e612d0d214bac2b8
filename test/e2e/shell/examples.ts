/**
 * Conversations on which the bridge once differed from the model, kept as data with the behaviour each shows:
 * shell-conformance.test.ts plays them on Discord before the generated ones.
 */
import { always, mention, world } from '../../model/examples.js';
import type { Case } from '../../model/generate.js';

export interface ShellExample {
  /** What it shows, as a behaviour. */
  readonly name: string;
  readonly case: Case;
}

export const SHELL_EXAMPLES: readonly ShellExample[] = [
  {
    name: 'answers a DM missed across a restart when the newest thing the DM stored was an edit',
    case: {
      world: world({ agents: [always('ada'), mention('bo')], humans: ['alice'] }),
      oracle: {
        ada: [
          { kind: 'text', text: '[pass]' },
          { kind: 'text', text: 'yes, here' },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:dm-ada-alice', human: 'alice', text: 'hello' },
        { kind: 'deliver', room: 'chat:dm-ada-alice' },
        // Naming someone new, the edit is stored as a message of its own, under an id of its own.
        { kind: 'edit', room: 'chat:dm-ada-alice', back: 1, text: 'hello @bo' },
        { kind: 'restart' },
        { kind: 'say', room: 'chat:dm-ada-alice', human: 'alice', text: 'are you there?', missed: true },
        { kind: 'caught-up', room: 'chat:dm-ada-alice' },
        { kind: 'deliver', room: 'chat:dm-ada-alice' },
      ],
    },
  },
  {
    name: "refuses a guest's /pass and goes on as if it had not been typed",
    case: {
      world: world({ agents: [mention('ada'), always('bo')], humans: ['alice'] }),
      oracle: { ada: [{ kind: 'text', text: 'on it' }], bo: [{ kind: 'text', text: '[pass]' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ada can you look?' },
        { kind: 'command', room: 'chat:main', name: 'pass', args: '', operator: false },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
];
