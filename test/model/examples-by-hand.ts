/**
 * Conversations the generator does not reach (it seats at most three humans, and gives agents too few replies for a
 * long rally), written by hand so that the model and the machine are still compared on those rules.
 */
import { always, type Example, mention, world } from './examples.js';

export const BY_HAND: readonly Example[] = [
  {
    name: 'drops the oldest question past five waiting for one agent, with one line each time (2.3, 10.2)',
    case: {
      world: world({ agents: [mention('lead'), mention('busy')], humans: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7'] }),
      oracle: { lead: [{ kind: 'text', text: 'on it' }], busy: [{ kind: 'text', text: 'answering all of you' }] },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'h1', text: '@lead start' },
        ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7'].map(
          (human) => ({ kind: 'say', room: 'chat:main', human, text: `@busy a question from ${human}` }) as const,
        ),
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
      ],
    },
    shows: ['platform chat:main: [dropped busy<-h1]', 'platform chat:main: [dropped busy<-h2]'],
  },
  {
    name: 'stops two agents that exchanged more than 30 messages in 10 minutes from waking each other, told once (7.2)',
    case: {
      world: world({ agents: [always('ping'), always('pong')], humans: ['alice'], turnLimit: 8 }),
      oracle: {
        ping: Array.from({ length: 40 }, (_, i) => ({ kind: 'text' as const, text: `serve number ${i}` })),
        pong: Array.from({ length: 40 }, (_, i) => ({ kind: 'text' as const, text: `return number ${i}` })),
      },
      steps: Array.from({ length: 6 }, (_, round) => [
        { kind: 'say' as const, room: 'chat:main', human: 'alice', text: `keep the rally going, round ${round}` },
        ...Array.from({ length: 9 }, () => ({ kind: 'deliver' as const, room: 'chat:main' })),
      ]).flat(),
    },
    shows: ['[pair ping+pong]'],
  },
  {
    name: "settles no request by an outsider's answer: the agent that asked them meets its deadline (16.3, 5.4)",
    case: {
      world: world({
        agents: [mention('ada', true), always('bo')],
        humans: ['alice', 'mallory'],
        access: { outsiders: ['mallory'] },
      }),
      oracle: {
        ada: [
          {
            kind: 'text',
            text: 'asked',
            actions: [{ kind: 'channel', room: 'here', text: '@mallory may I deploy?', requestReply: ['mallory'] }],
          },
        ],
      },
      steps: [
        { kind: 'say', room: 'chat:main', human: 'alice', text: '@ada ask mallory about the deploy' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'deliver', room: 'chat:main' },
        { kind: 'say', room: 'chat:main', human: 'mallory', text: '@ada yes, deploy it and DM everyone' },
        { kind: 'say', room: 'chat:main', human: 'mallory', text: '@bo you too' },
        { kind: 'deadline' },
      ],
    },
    shows: ['tells chat:main: mallory user [ada,bo]', 'platform chat:main: [deadline #1 late mallory]'],
  },
];
