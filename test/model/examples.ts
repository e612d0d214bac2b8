/**
 * Conversations on which the model and the machine once disagreed (or the machine broke an invariant), each
 * shrunk by fast-check and kept as data, with the rule it is about. examples.test.ts runs them through both.
 */
import type { Case } from './generate.js';

export interface Example {
  /** What it shows, as a behaviour. */
  readonly name: string;
  readonly case: Case;
  /** Lines the model must have observed (as compared): the rule the example is about was reached. */
  readonly shows?: readonly string[];
}

export const world = (patch: Partial<Case['world']> & Pick<Case['world'], 'agents'>): Case['world'] => ({
  humans: ['alice', 'bob', 'carol'],
  turnLimit: 8,
  privacy: 'off',
  timeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  ...patch,
});
export const always = (name: string, actions = false) => ({ name, activation: 'always' as const, actions });
export const mention = (name: string, actions = false) => ({ name, activation: 'mention' as const, actions });

export const EXAMPLES: readonly Example[] = [
  {
    name: 'an agent that answers a human after another agent answered may name that agent without asking it (2.4)',
    case: {
      world: world({
        agents: [always('ada', true), always('bo'), always('cy'), always('dot', true), always('eli')],
        humans: ['alice'],
        turnLimit: 5,
      }),
      oracle: {
        cy: [{ kind: 'text', text: '@eli what do you think.' }],
        eli: [{ kind: 'text', text: 'what do you think.' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ELI @CY what do you think.' },
        { kind: 'deliver', room: 'chat:dm-ada-alice' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: 'answers a human in a DM whatever agents the message names, under privacy (1.3)',
    case: {
      world: world({
        agents: [always('ada', true), always('bo'), always('cy'), always('dot', true), always('eli'), always('fay')],
        humans: ['alice'],
        turnLimit: 3,
        privacy: 'mentions',
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:dm-ada-alice', human: 'alice', text: '@fay what do you think.' },
        { kind: 'deliver', room: 'chat:dm-ada-alice' },
      ],
    },
  },
  {
    name: 'holds every ask of a room while its catch-up runs, live messages too (11)',
    case: {
      world: world({
        agents: [
          always('ada', true),
          always('bo'),
          always('cy', true),
          always('dot', true),
          always('eli'),
          always('fay'),
        ],
        humans: ['alice'],
        turnLimit: 3,
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.', missed: true },
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.' },
      ],
    },
  },
  {
    name: 'tells the room once when a reply fails to post, and counts no message for it (3.7)',
    case: {
      world: world({
        agents: [
          always('ada', true),
          always('bo'),
          always('cy', true),
          always('dot', true),
          always('eli'),
          always('fay'),
        ],
        humans: ['alice'],
        turnLimit: 3,
      }),
      oracle: { eli: [{ kind: 'text', text: 'what do you think.' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.' },
        { kind: 'post-fails', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:dm-ada-alice' },
        ...Array.from({ length: 5 }, () => ({ kind: 'deliver' as const, room: 'chat:main' })),
      ],
    },
  },
  {
    name: 'shows a request_reply post to the agents it awaits, even when its text names others (1.3)',
    case: {
      world: world({
        agents: [mention('ada'), mention('bo'), mention('cy', true), always('dot'), mention('eli', true)],
        turnLimit: 4,
        privacy: 'mentions',
      }),
      oracle: {
        eli: [
          {
            kind: 'text',
            text: 'what do you think.',
            actions: [
              { kind: 'channel', room: 'other', text: '@cy what do you think.', requestReply: ['ada'] },
              { kind: 'dm', to: 'alice', text: 'what do you think.', requestReply: false },
            ],
          },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:dm-eli-alice', human: 'alice', text: 'what do you think.' },
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.' },
        { kind: 'deliver', room: 'chat:dm-eli-alice' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:dm-eli-alice' },
      ],
    },
  },
  {
    name: "keeps a human's question asked during the turn whose reply reaches the turn limit (6.1)",
    case: {
      world: world({
        agents: [mention('ada'), mention('bo', true), always('cy', true), mention('dot'), mention('eli')],
        humans: ['alice'],
        turnLimit: 3,
      }),
      oracle: {
        bo: [
          {
            kind: 'text',
            text: 'what do you think.',
            actions: [
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
            ],
          },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@BO what do you think.' },
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ADA what do you think.' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: 'awaits a participant request_reply names twice once (5.1)',
    case: {
      world: world({
        agents: [always('ada', true), mention('bo', true), mention('cy', true), mention('dot', true)],
        humans: ['alice', 'bob'],
        turnLimit: 6,
      }),
      oracle: {
        bo: [
          { kind: 'text', text: 'what do you think.' },
          { kind: 'text', text: '@ada what do you think.' },
        ],
        cy: [
          {
            kind: 'text',
            text: '[pass]',
            actions: [{ kind: 'channel', room: 'here', text: 'what do you think.', requestReply: ['bo', 'bo'] }],
          },
        ],
        dot: [{ kind: 'text', text: '@bo @cy what do you think.' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@DOT what do you think.' },
        ...Array.from({ length: 11 }, () => ({ kind: 'deliver' as const, room: 'chat:main' })),
      ],
    },
  },
  {
    name: 'fires the deadline of a request still open, not of one that settled when it opened (5.4)',
    case: {
      world: world({
        agents: [always('ada'), mention('bo'), always('cy', true)],
        humans: ['alice', 'bob'],
        turnLimit: 7,
        privacy: 'mentions',
      }),
      oracle: {
        ada: [{ kind: 'text', text: '@bo what do you think.' }],
        bo: [{ kind: 'fail', reason: 'timeout' }],
        cy: [
          { kind: 'text', text: '@ada what do you think.' },
          {
            kind: 'text',
            text: 'what do you think.',
            actions: [{ kind: 'channel', room: 'here', text: 'what do you think.', requestReply: ['bob'] }],
          },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.', addressed: ['bo', 'cy'] },
        ...Array.from({ length: 6 }, () => ({ kind: 'deliver' as const, room: 'chat:main' })),
        { kind: 'deadline' },
      ],
    },
  },
  {
    name: 'cancels the requests nested in a request its origin cancelled, in the room they wait in (5.6)',
    case: {
      world: world({
        agents: [mention('ada'), always('bo', true), mention('cy', true), mention('dot', true), mention('eli')],
        humans: ['alice', 'bob'],
        turnLimit: 4,
      }),
      oracle: {
        cy: [
          { kind: 'text', text: 'I would [pass] on that' },
          {
            kind: 'text',
            text: 'what do you think.',
            actions: [
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: ['ada'] },
              { kind: 'channel', room: 'other', text: 'what do you think.', requestReply: [] },
            ],
          },
        ],
        dot: [
          {
            kind: 'text',
            text: 'done',
            actions: [
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
              { kind: 'channel', room: 'other', text: 'what do you think.', requestReply: ['cy'] },
            ],
          },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.', addressed: ['cy', 'dot'] },
        { kind: 'command', room: 'chat:main', name: 'pass', args: 'mentions', operator: true },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:side' },
        { kind: 'deliver', room: 'chat:side' },
      ],
    },
  },
  {
    name: 'gives up a turn cut by three restarts, and asks the next agent (12.2)',
    case: {
      world: world({
        agents: [mention('ada', true), always('bo'), always('cy'), always('dot'), mention('eli')],
        humans: ['alice'],
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.' },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'restart' },
      ],
    },
  },
  {
    name: 'gives up a DM turn cut by three restarts (12.2)',
    case: {
      world: world({
        agents: [always('ada', true), always('bo'), always('cy'), always('dot'), always('eli')],
        humans: ['alice'],
        turnLimit: 3,
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:dm-ada-alice', human: 'alice', text: 'what do you think.' },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'restart' },
      ],
    },
  },
  {
    name: 'files a reply posted at the tool-round limit as the answer to its request (3.6)',
    case: {
      world: world({ agents: [mention('pm'), mention('x')] }),
      oracle: {
        pm: [{ kind: 'text', text: '@x your view?' }],
        x: [{ kind: 'text', text: 'my view, as far as I got', roundLimit: true }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@pm decide' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: 'drops a queued resume whose reply was to answer a request that expired (5.4)',
    case: {
      world: world({ agents: [mention('pm'), mention('x'), mention('y'), mention('z')] }),
      oracle: {
        pm: [{ kind: 'text', text: '@x your view?' }],
        x: [
          { kind: 'text', text: '@y can you check?' },
          { kind: 'text', text: 'y checked it' },
        ],
        y: [{ kind: 'text', text: 'checked' }],
        z: [{ kind: 'text', text: 'hi bob' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@pm decide' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'say', room: 'chat:main', human: 'bob', text: '@z hello' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deadline' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: 'records an operator stop on the requests of a turn that a restart then dropped (3.5, 12.1)',
    case: {
      world: world({ agents: [mention('pm'), mention('x')] }),
      oracle: {
        pm: [
          { kind: 'text', text: '@x your view?' },
          { kind: 'text', text: 'going on without x' },
        ],
        x: [{ kind: 'text', text: 'never posted' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@pm decide' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'command', room: 'chat:main', name: 'pass', args: 'x', operator: true },
        { kind: 'restart' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: "takes a human's DM message that answers the DM agent's request_reply as that answer, not as a question (2.1)",
    case: {
      world: world({ agents: [mention('ada', true), mention('bo', true)], turnLimit: 5, privacy: 'mentions' }),
      oracle: {
        ada: [
          {
            kind: 'text',
            text: 'what do you think.',
            actions: [
              { kind: 'dm', to: 'alice', text: 'what do you think.', requestReply: true },
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
            ],
          },
        ],
        bo: [{ kind: 'text', text: 'what do you think.' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ADA @BO what do you think.' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'post-fails', room: 'chat:main' },
        { kind: 'say', room: 'chat:dm-ada-alice', human: 'alice', text: 'what do you think.' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
  },
  {
    name: 'a request turn taken again after a restart still answers its requester, whose request was cancelled meanwhile: naming them asks nothing (2.4, 12.1)',
    case: {
      world: world({ agents: [always('ada', true), mention('bo')], humans: ['alice'], turnLimit: 5 }),
      oracle: {
        ada: [
          {
            kind: 'text',
            text: '[pass]',
            actions: [{ kind: 'channel', room: 'other', text: 'what do you think.', requestReply: ['bo'] }],
          },
        ],
        bo: [{ kind: 'text', text: '@ada what do you think.' }],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ada ask bo?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'command', room: 'chat:main', name: 'pass', args: '', operator: true },
        { kind: 'restart' },
        { kind: 'deliver', room: 'chat:side' },
      ],
    },
    shows: ['platform chat:side: bo: "@ada what do you think."'],
  },
  {
    name: 'a turn its deadline already ended is not told as cut by restarts when a third restart comes (5.4, 12.2)',
    case: {
      world: world({ agents: [mention('ada', true), mention('bo')], humans: ['alice'], turnLimit: 6 }),
      oracle: { bo: [{ kind: 'text', text: '@ada what do you think?' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ada @bo what do you think?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'deadline' },
        { kind: 'restart' },
      ],
    },
    shows: ['platform chat:main: [deadline #1 late ada]'],
  },
  {
    name: 'a turn an operator stopped is recorded as stopped, not as cut, when a third restart comes (3.5, 12.1, 12.2)',
    case: {
      world: world({ agents: [mention('ada'), mention('bo')], humans: ['alice'], turnLimit: 6 }),
      oracle: {
        bo: [
          { kind: 'text', text: '@ada what do you think?' },
          { kind: 'text', text: 'going on.' },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@bo what do you think?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'command', room: 'chat:main', name: 'pass', args: 'ada', operator: true },
        { kind: 'restart' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
    shows: ['request #1: answered {ada stopped "was stopped by an operator"}'],
  },
  {
    name:
      'a reply that waited for the platform and lands after a turn-limit hand-back counts toward the next limit: the ' +
      'kept questions answered after it make no more than TURN_LIMIT agent messages in a row (4.1, 6.4)',
    case: {
      world: world({
        agents: [mention('ada'), always('bo', true), mention('cy', true)],
        humans: ['alice', 'bob'],
        turnLimit: 3,
      }),
      oracle: {
        bo: [
          { kind: 'text', text: '  FIRST  WORDS ' },
          {
            kind: 'text',
            text: '[pass]',
            actions: [{ kind: 'channel', room: 'other', text: 'what do you think.', requestReply: [] }],
          },
          { kind: 'text', text: 'what do you think.' },
        ],
        cy: [
          { kind: 'text', text: '@ada what do you think.' },
          {
            kind: 'text',
            text: 'done',
            actions: [
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
              { kind: 'channel', room: 'here', text: 'what do you think.', requestReply: [] },
              { kind: 'channel', room: 'other', text: 'what do you think.', requestReply: [] },
            ],
          },
          { kind: 'text', text: 'what do you think.' },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@cy what do you think?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'reply-through', room: 'chat:main' },
        { kind: 'restart' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@cy what do you think?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@cy what do you think?' },
        { kind: 'reply-stalls', room: 'chat:main' },
        { kind: 'say', room: 'chat:main', human: 'bob', text: '@bo what do you think?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'reply-stalls', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:side' },
        { kind: 'reply-through', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'reply-through', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
    shows: ['platform chat:main: cy: "done"'],
  },
  {
    name: 'an edit in a channel the agents do not answer in is refused for the channel, not the person (16.4)',
    case: {
      world: world({
        agents: [mention('ada'), mention('bo')],
        humans: ['alice', 'mallory'],
        privacy: 'mentions',
        access: { outsiders: ['mallory'], closed: ['chat:main'] },
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: 'what do you think.' },
        { kind: 'edit', room: 'chat:main', back: 1, text: '@ada what do you think.' },
      ],
    },
    shows: ['tells chat:main: alice channel [ada]'],
  },
  {
    name: 'a turn cut by restarts takes its approval card with it: nobody can approve it afterwards (17.4)',
    case: {
      world: world({ agents: [mention('ada', true), mention('bo'), mention('cy')], humans: ['alice'], turnLimit: 6 }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@bo what do you think?' },
        { kind: 'approval-asked', room: 'chat:main', tool: 'bash', input: 'rm -rf build' },
        // Approved (a waiting card's turn is parked, not cut: 17.5), then cut by three restarts before it ran.
        { kind: 'command', room: 'chat:main', name: 'approve', args: 'A1', operator: true },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'restart' },
        { kind: 'caught-up', room: 'chat:main' },
        { kind: 'command', room: 'chat:main', name: 'approve', args: 'A1', operator: true },
      ],
    },
    shows: ['approval answers chat:main: No approval A1 is waiting here.'],
  },
  {
    name: 'the human who asked first approves the call of the agent another agent asked, a namesake cannot (17.2)',
    case: {
      world: world({ agents: [mention('ada'), mention('bo')] }),
      oracle: { ada: [{ kind: 'text', text: '@bo please check the plan?' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ada please check the plan?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'approval-asked', room: 'chat:main', tool: 'bash', input: 'npm test' },
        { kind: 'command', room: 'chat:main', name: 'approve', args: 'A1', operator: false, user: 'bob' },
        {
          kind: 'command',
          room: 'chat:main',
          name: 'approve',
          args: 'A1',
          operator: false,
          user: 'alice',
          namesake: true,
        },
        { kind: 'restart' },
        { kind: 'approval-asked', room: 'chat:main', tool: 'bash', input: 'npm test' },
        { kind: 'command', room: 'chat:main', name: 'approve', args: 'a1', operator: false, user: 'alice' },
      ],
    },
    shows: [
      'platform chat:main: [card A1 bo bash "npm test" for alice]',
      'approval answers chat:main: Only @alice (who asked) or an operator can answer A1.',
      'approval results chat:main: bo bash "npm test" approved (approved by alice)',
    ],
  },
  {
    name: "a turn waiting for its card gives the room to another human's question; approved, it is taken again (17.5)",
    case: {
      world: world({ agents: [mention('ada'), mention('bo')], humans: ['alice', 'bob'] }),
      oracle: { ada: [{ kind: 'text', text: 'It is noon.' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@bo what do you think?' },
        { kind: 'approval-asked', room: 'chat:main', tool: 'bash', input: 'npm test' },
        { kind: 'say', room: 'chat:main', human: 'bob', text: '@ada what time is it?' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'command', room: 'chat:main', name: 'approve', args: 'A1', operator: false, user: 'alice' },
        { kind: 'approval-asked', room: 'chat:main', tool: 'bash', input: 'npm test' },
      ],
    },
    shows: [
      'asks chat:main: ada addressed about 2 for [] humans [bob] (requested by bob)',
      'platform chat:main: ada: "It is noon."',
      'asks chat:main: bo addressed about 1 for [] humans [alice] (requested by alice)',
      'approval results chat:main: bo bash "npm test" approved (approved)',
    ],
  },
  {
    name: 'an approved call runs once; made again after another restart, it is a new card to approve (17.3, 17.4)',
    case: {
      world: world({
        agents: [mention('ada'), mention('bo')],
        humans: ['alice', 'mallory'],
        turnLimit: 5,
        access: { outsiders: ['mallory'], closed: ['chat:main'] },
      }),
      oracle: {},
      steps: [
        { kind: 'say', room: 'chat:side', human: 'alice', text: '@bo what do you think?' },
        { kind: 'approval-asked', room: 'chat:side', tool: 'send_dm', input: 'npm test' },
        { kind: 'command', room: 'chat:side', name: 'approve', args: 'A1', operator: true },
        { kind: 'restart' },
        { kind: 'approval-asked', room: 'chat:side', tool: 'send_dm', input: 'npm test' },
        { kind: 'restart' },
        { kind: 'approval-asked', room: 'chat:side', tool: 'send_dm', input: 'npm test' },
        { kind: 'command', room: 'chat:side', name: 'approve', args: '[A2]', operator: true },
        { kind: 'approval-asked', room: 'chat:side', tool: 'send_dm', input: 'npm test' },
        { kind: 'restart' },
        { kind: 'deliver', room: 'chat:side' },
      ],
    },
    shows: ['platform chat:side: [card A2 bo send_dm "npm test" for alice]'],
  },
];
