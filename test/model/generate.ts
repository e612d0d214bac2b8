/**
 * Generated conversations: a world (2–6 agents, 1–3 humans), each agent's replies (the oracle) and a script of
 * steps. Texts are built from the rules' edge cases: mentions, quotes, code spans and fences holding mentions,
 * passes and their look-alikes, the hand-back tag, questions, acknowledgements and exact repeats, actions.
 */
import fc from 'fast-check';
import type { CommandName } from '../../src/room/events.js';
import { dmRoom, MAIN, type Oracle, type Reply, type ReplyAction, SIDE, type Step, type World } from './script.js';

export interface Case {
  readonly world: World;
  readonly oracle: Oracle;
  readonly steps: readonly Step[];
}

const AGENTS = ['ada', 'bo', 'cy', 'dot', 'eli', 'fay'];
const HUMANS = ['alice', 'bob', 'carol'];
/** People the access policy lets wake no agent (rule 16), in the worlds that have one. */
const OUTSIDERS = ['mallory', 'eve'];

/**
 * The access policy of some worlds: one or two outsiders among the humans (the agents may still name them, DM them,
 * await them), maybe bob limited to one agent (an agent file's `access:`), maybe a channel outside ACCESS_CHANNELS.
 */
const accessArb = fc.option(
  fc.record({
    outsiders: fc.constantFrom(OUTSIDERS.slice(0, 1), OUTSIDERS),
    only: fc.option(
      fc.constantFrom(AGENTS.slice(0, 1), AGENTS.slice(1, 2)).map((agents) => ({ bob: agents })),
      { freq: 2 },
    ),
    closed: fc.option(fc.constantFrom([SIDE], [SIDE], [MAIN]), { freq: 4 }),
  }),
  { freq: 3 },
);

export const worldArb: fc.Arbitrary<World> = fc
  .record({
    n: fc.integer({ min: 2, max: 6 }),
    activations: fc.array(fc.constantFrom<'always' | 'mention'>('always', 'mention', 'mention'), {
      minLength: 6,
      maxLength: 6,
    }),
    actions: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    humans: fc.integer({ min: 1, max: 3 }),
    turnLimit: fc.integer({ min: 3, max: 8 }),
    privacy: fc.constantFrom<'off' | 'mentions'>('off', 'mentions'),
    access: accessArb,
  })
  .map(
    ({ n, activations, actions, humans, turnLimit, privacy, access }): World => ({
      agents: AGENTS.slice(0, n).map((name, i) => ({
        name,
        activation: activations[i] ?? 'mention',
        actions: actions[i] ?? false,
      })),
      humans: [...HUMANS.slice(0, humans), ...(access?.outsiders ?? [])],
      turnLimit,
      privacy,
      timeoutMs: 600_000,
      editWindowMs: 120_000,
      maxToolRounds: 8,
      ...(access
        ? {
            access: {
              outsiders: access.outsiders,
              ...(access.only ? { only: access.only } : {}),
              ...(access.closed ? { closed: access.closed } : {}),
            },
          }
        : {}),
    }),
  );

const PHRASES = [
  'what do you think',
  'please check the plan',
  'the numbers look off',
  'here is a draft',
  'I disagree',
  'ship it',
];

/** A message: mentions in prose, a phrase, maybe a question, maybe a quote, code span or fence holding a mention. */
function messageArb(names: readonly string[], upper = false): fc.Arbitrary<string> {
  const name = fc.constantFrom(...names).map((n) => (upper ? n.toUpperCase() : n));
  return fc
    .record({
      lead: fc.array(name, { maxLength: 3 }),
      phrase: fc.constantFrom(...PHRASES),
      question: fc.boolean(),
      tail: fc.option(
        fc.oneof(
          name.map((n) => `\n> @${n} wrote: earlier words`),
          name.map((n) => ` see \`@${n}\``),
          name.map((n) => `\n\`\`\`\n@${n} in code\n\`\`\``),
          name.map((n) => ` thanks @${n}`),
          fc.constant(' mail a@b.example or @@x or @'),
        ),
        { freq: 3 },
      ),
    })
    .map(
      ({ lead, phrase, question, tail }) =>
        `${lead.map((n) => `@${n} `).join('')}${phrase}${question ? '?' : '.'}${tail ?? ''}`,
    );
}

const PASSES = ['[pass]', '[pass].', '`[pass]`', '[PASS] nothing to add', '"[pass]"', ''];
const LOOKALIKES = [
  'I would [pass] on that',
  '[pass]\nbut here is a second line',
  '[pass] and then a great many more words than eight here',
];
const WORLD_PASSES = [
  '<world>pass</world>',
  'All done. <world>pass</world>',
  'All done. `<world>pass</world>`',
  'Example:\n```\n<world>pass</world>\n```',
  'Over to you `<world>pass</world>` and `x`',
];
const ACKS = ['thanks!', 'got it', 'ok', 'Thank you so much', 'sounds good'];

function actionArb(world: World, self: string): fc.Arbitrary<ReplyAction> {
  const people = [...world.agents.map((a) => a.name), ...world.humans];
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('channel' as const),
        room: fc.constantFrom<'here' | 'other'>('here', 'here', 'other'),
        text: messageArb([...people, self]),
        requestReply: fc.array(fc.constantFrom(...people, self), { maxLength: 2 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('dm' as const),
        to: fc.constantFrom(...world.humans, ...world.agents.map((a) => a.name)),
        text: messageArb(people),
        requestReply: fc.boolean(),
      }),
    },
  );
}

function replyArb(world: World, self: string): fc.Arbitrary<Reply> {
  const people = [...world.agents.map((a) => a.name).filter((n) => n !== self), ...world.humans];
  const text = (t: fc.Arbitrary<string>) => t.map((s): Reply => ({ kind: 'text', text: s }));
  const acts = world.agents.find((a) => a.name === self)?.actions === true;
  return fc.oneof(
    { weight: 8, arbitrary: text(messageArb(people)) },
    // A question to a human: the agent then waits for their answer (2.2.2).
    {
      weight: 2,
      arbitrary: text(
        fc.tuple(fc.constantFrom(...world.humans), fc.constantFrom(...PHRASES)).map(([h, p]) => `@${h} ${p}?`),
      ),
    },
    { weight: 3, arbitrary: text(fc.constantFrom(...PASSES)) },
    { weight: 1, arbitrary: text(fc.constantFrom(...LOOKALIKES)) },
    { weight: 1, arbitrary: text(fc.constantFrom(...WORLD_PASSES)) },
    {
      weight: 1,
      arbitrary: text(
        fc.constantFrom(...ACKS).chain((a) => fc.option(fc.constantFrom(...people)).map((n) => (n ? `${a} @${n}` : a))),
      ),
    },
    { weight: 1, arbitrary: fc.constant<Reply>({ kind: 'text', text: '<<repeat>>' }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('timeout', 'no readable text').map((reason): Reply => ({ kind: 'fail', reason })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(messageArb(people), fc.constantFrom('', '[pass]'))
        .map((s): Reply => ({ kind: 'text', text: s, roundLimit: true })),
    },
    {
      weight: acts ? 4 : 0,
      arbitrary: fc
        .record({
          text: fc.oneof(messageArb(people), fc.constantFrom('[pass]', 'done')),
          actions: fc.array(actionArb(world, self), { minLength: 1, maxLength: 3 }),
        })
        .map(({ text: t, actions }): Reply => ({ kind: 'text', text: t, actions })),
    },
  );
}

/** `<<repeat>>` becomes the agent's previous text (case and spacing changed), or a plain message. */
function resolveRepeats(replies: readonly Reply[]): Reply[] {
  let previous = 'first words';
  return replies.map((reply) => {
    if (reply.kind !== 'text') return reply;
    if (reply.text !== '<<repeat>>') {
      previous = reply.text;
      return reply;
    }
    return { kind: 'text', text: `  ${previous.toUpperCase().replace(/ /g, '  ')} ` };
  });
}

export function oracleArb(world: World): fc.Arbitrary<Oracle> {
  const entries = world.agents.map((a) => fc.array(replyArb(world, a.name), { maxLength: 12 }).map(resolveRepeats));
  return fc.tuple(...entries).map((lists) => Object.fromEntries(world.agents.map((a, i) => [a.name, lists[i] ?? []])));
}

export function stepArb(world: World): fc.Arbitrary<Step> {
  const agents = world.agents.map((a) => a.name);
  const human = fc.constantFrom(...world.humans);
  const dm = fc.tuple(fc.constantFrom(...agents), human).map(([a, h]) => dmRoom(a, h));
  const room = fc.oneof(
    { weight: 6, arbitrary: fc.constant(MAIN) },
    { weight: 2, arbitrary: fc.constant(SIDE) },
    { weight: 1, arbitrary: dm },
  );
  const channel = fc.constantFrom(MAIN, MAIN, SIDE);
  const say = fc
    .record({
      room,
      human,
      text: messageArb([...agents, ...world.humans], true),
      addressed: fc.option(fc.subarray(agents, { maxLength: 2 }), { freq: 8 }),
      missed: fc.option(fc.constant(true), { freq: 10 }),
    })
    .map(({ room: r, human: h, text, addressed, missed }): Step => {
      // In a DM, the human is the DM's human.
      const dmHuman = /^chat:dm-[^-]+-(.+)$/.exec(r)?.[1];
      return {
        kind: 'say',
        room: r,
        human: dmHuman ?? h,
        text,
        ...(addressed && !dmHuman ? { addressed } : {}),
        ...(missed ? { missed } : {}),
      };
    });
  const command = fc
    .record({
      room: channel,
      name: fc.constantFrom<CommandName>('pass', 'pass', 'reset', 'privacy', 'status'),
      arg: fc.oneof(fc.constant(''), fc.constantFrom(...agents), fc.constantFrom('mentions', 'off', 'nobody')),
      operator: fc.constantFrom(true, true, true, false),
    })
    .map(({ room: r, name, arg, operator }): Step => ({ kind: 'command', room: r, name, args: arg, operator }));
  return fc.oneof(
    { weight: 8, arbitrary: say },
    { weight: 12, arbitrary: room.map((r): Step => ({ kind: 'deliver', room: r })) },
    { weight: 2, arbitrary: fc.constant<Step>({ kind: 'deadline' }) },
    { weight: 2, arbitrary: command },
    {
      weight: 3,
      arbitrary: fc
        .record({ back: fc.integer({ min: 1, max: 3 }), text: messageArb(agents), late: fc.boolean() })
        .map(({ back, text, late }): Step => ({ kind: 'edit', room: MAIN, back, text, ...(late ? { late } : {}) })),
    },
    { weight: 1, arbitrary: fc.constant<Step>({ kind: 'restart' }) },
    { weight: 1, arbitrary: channel.map((r): Step => ({ kind: 'post-fails', room: r })) },
    { weight: 1, arbitrary: channel.map((r): Step => ({ kind: 'reply-stalls', room: r })) },
    { weight: 1, arbitrary: channel.map((r): Step => ({ kind: 'reply-through', room: r })) },
    { weight: 1, arbitrary: channel.map((r): Step => ({ kind: 'caught-up', room: r })) },
  );
}

const broadArb: fc.Arbitrary<Case> = worldArb.chain((world) =>
  fc.record({
    world: fc.constant(world),
    oracle: oracleArb(world),
    steps: fc.array(stepArb(world), { minLength: 1, maxLength: 40 }),
  }),
);

/**
 * Conversations about requests: two or three agents that mostly ask each other (and the humans) questions, with
 * deadlines, restarts and operator stops falling while their turns are written.
 */
const requestsArb: fc.Arbitrary<Case> = fc
  .record({
    base: worldArb,
    n: fc.integer({ min: 2, max: 3 }),
    humans: fc.integer({ min: 1, max: 2 }),
    turnLimit: fc.integer({ min: 5, max: 8 }),
  })
  .map(
    ({ base, n, humans, turnLimit }): World => ({
      ...base,
      agents: base.agents.slice(0, n).map((a) => ({ ...a, activation: 'mention' })),
      humans: [...HUMANS.slice(0, humans), ...(base.access?.outsiders ?? [])],
      turnLimit,
    }),
  )
  .chain((world) => {
    const agents = world.agents.map((a) => a.name);
    const reply = (self: string): fc.Arbitrary<Reply> => {
      const others = agents.filter((a) => a !== self);
      const ask = (names: readonly string[]) =>
        fc
          .tuple(fc.constantFrom(...names), fc.constantFrom(...PHRASES))
          .map(([n, p]): Reply => ({ kind: 'text', text: `@${n} ${p}?` }));
      return fc.oneof(
        { weight: 5, arbitrary: ask(others) },
        { weight: 2, arbitrary: ask(world.humans) },
        { weight: 3, arbitrary: fc.constantFrom(...PHRASES).map((p): Reply => ({ kind: 'text', text: `${p}.` })) },
        { weight: 2, arbitrary: fc.constantFrom(...PASSES).map((t): Reply => ({ kind: 'text', text: t })) },
        { weight: 1, arbitrary: fc.constant<Reply>({ kind: 'fail', reason: 'timeout' }) },
        { weight: world.agents.find((a) => a.name === self)?.actions ? 2 : 0, arbitrary: replyArb(world, self) },
        // request_reply to a human here (an outsider too: their words settle nothing, the deadline does).
        {
          weight: world.agents.find((a) => a.name === self)?.actions ? 2 : 0,
          arbitrary: fc.tuple(fc.constantFrom(...world.humans), fc.constantFrom(...PHRASES)).map(
            ([human, p]): Reply => ({
              kind: 'text',
              text: 'done',
              actions: [{ kind: 'channel', room: 'here', text: `@${human} ${p}?`, requestReply: [human] }],
            }),
          ),
        },
      );
    };
    const lists = world.agents.map((a) => fc.array(reply(a.name), { maxLength: 12 }));
    const say = fc
      .tuple(fc.constantFrom(...world.humans), fc.subarray(agents, { maxLength: 2 }), fc.constantFrom(...PHRASES))
      .map(
        ([human, named, p]): Step => ({
          kind: 'say',
          room: MAIN,
          human,
          text: `${named.map((n) => `@${n} `).join('')}${p}?`,
        }),
      );
    const step = fc.oneof(
      { weight: 5, arbitrary: say },
      { weight: 12, arbitrary: fc.constant<Step>({ kind: 'deliver', room: MAIN }) },
      { weight: 2, arbitrary: fc.constant<Step>({ kind: 'deliver', room: SIDE }) },
      { weight: 4, arbitrary: fc.constant<Step>({ kind: 'deadline' }) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'restart' }) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom('', ...agents)
          .map((args): Step => ({ kind: 'command', room: MAIN, name: 'pass', args, operator: true })),
      },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'post-fails', room: MAIN }) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'reply-stalls', room: MAIN }) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'reply-through', room: MAIN }) },
      // Rule 17: the requested agents' turns hold calls; the human who started the chain may answer them.
      { weight: 2, arbitrary: approvalStepsArb(world, fc.constant(MAIN)) },
    );
    return fc.record({
      world: fc.constant(world),
      oracle: fc.tuple(...lists).map((l) => Object.fromEntries(world.agents.map((a, i) => [a.name, l[i] ?? []]))),
      steps: fc.array(step, { minLength: 1, maxLength: 40 }),
    });
  });

/**
 * Conversations where the platform keeps failing the replies of the main channel for a while: humans ask agents,
 * replies wait (the room with them), go through later, or an operator drops them with /pass or /reset; restarts and
 * deadlines fall in between.
 */
const stallsArb: fc.Arbitrary<Case> = worldArb.chain((world) => {
  const agents = world.agents.map((a) => a.name);
  const say = fc
    .tuple(
      fc.constantFrom(...world.humans),
      fc.subarray(agents, { minLength: 1, maxLength: 2 }),
      fc.constantFrom(...PHRASES),
    )
    .map(
      ([human, named, p]): Step => ({
        kind: 'say',
        room: MAIN,
        human,
        text: `${named.map((n) => `@${n} `).join('')}${p}?`,
      }),
    );
  const operator = (name: CommandName): Step => ({ kind: 'command', room: MAIN, name, args: '', operator: true });
  const step = fc.oneof(
    { weight: 3, arbitrary: say },
    { weight: 6, arbitrary: fc.constant<Step>({ kind: 'deliver', room: MAIN }) },
    { weight: 3, arbitrary: fc.constant<Step>({ kind: 'reply-stalls', room: MAIN }) },
    { weight: 1, arbitrary: fc.constant<Step>({ kind: 'reply-through', room: MAIN }) },
    { weight: 2, arbitrary: fc.constantFrom(operator('pass'), operator('reset')) },
    { weight: 1, arbitrary: fc.constantFrom<Step>({ kind: 'restart' }, { kind: 'deadline' }) },
  );
  return fc.record({
    world: fc.constant(world),
    oracle: oracleArb(world),
    steps: fc.array(step, { minLength: 10, maxLength: 40 }),
  });
});

/**
 * Conversations with outsiders (rule 16): agents that ask the humans, outsiders among them, for replies (by
 * request_reply and by name), humans and outsiders asking the agents, and the outsiders' words falling while turns
 * are written, after /pass, across restarts, as edits and as answers the agents wait for.
 */
const outsidersArb: fc.Arbitrary<Case> = worldArb
  .filter((world) => world.access !== undefined)
  .chain((world) => {
    const agents = world.agents.map((a) => a.name);
    const outsiders = world.access?.outsiders ?? [];
    const asks = (self: string): fc.Arbitrary<Reply> =>
      fc.tuple(fc.constantFrom(...world.humans), fc.constantFrom(...PHRASES), fc.boolean()).map(
        ([human, p, byAction]): Reply =>
          byAction && world.agents.find((a) => a.name === self)?.actions
            ? {
                kind: 'text',
                text: 'done',
                actions: [{ kind: 'channel', room: 'here', text: `@${human} ${p}?`, requestReply: [human] }],
              }
            : { kind: 'text', text: `@${human} ${p}?` },
      );
    const reply = (self: string): fc.Arbitrary<Reply> =>
      fc.oneof({ weight: 3, arbitrary: asks(self) }, { weight: 4, arbitrary: replyArb(world, self) });
    const lists = world.agents.map((a) => fc.array(reply(a.name), { maxLength: 12 }));
    const say = fc
      .record({
        human: fc.constantFrom(...world.humans, ...outsiders),
        named: fc.subarray(agents, { maxLength: 2 }),
        phrase: fc.constantFrom(...PHRASES, 'yes, go ahead', 'stop that'),
        room: fc.constantFrom(MAIN, MAIN, MAIN, SIDE),
      })
      .map(
        ({ human, named, phrase, room }): Step => ({
          kind: 'say',
          room,
          human,
          text: `${named.map((n) => `@${n} `).join('')}${phrase}?`,
        }),
      );
    const operator = (name: CommandName): Step => ({ kind: 'command', room: MAIN, name, args: '', operator: true });
    const step = fc.oneof(
      { weight: 6, arbitrary: say },
      {
        weight: 10,
        arbitrary: fc.constantFrom<Step>({ kind: 'deliver', room: MAIN }, { kind: 'deliver', room: SIDE }),
      },
      {
        weight: 2,
        arbitrary: fc
          .record({ back: fc.integer({ min: 1, max: 2 }), agent: fc.constantFrom(...agents) })
          .map(
            ({ back, agent }): Step => ({ kind: 'edit', room: MAIN, back, text: `@${agent} please check the plan.` }),
          ),
      },
      { weight: 2, arbitrary: fc.constant<Step>({ kind: 'deadline' }) },
      { weight: 1, arbitrary: fc.constantFrom(operator('pass'), operator('reset')) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'restart' }) },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'caught-up', room: MAIN }) },
    );
    return fc.record({
      world: fc.constant(world),
      oracle: fc.tuple(...lists).map((l) => Object.fromEntries(world.agents.map((a, i) => [a.name, l[i] ?? []]))),
      steps: fc.array(step, { minLength: 5, maxLength: 40 }),
    });
  });

const TOOLS = ['bash', 'write_files', 'send_dm'];
const INPUTS = ['rm -rf build', 'npm test', 'notes.md', 'rm -rf build '];

/**
 * Rule 17's steps for a world: a turn holding a tool call (few calls, so the same one comes again), /approve and
 * /deny by the humans (the asker, another one, a namesake with another id) and operators, and the cards' deadline.
 */
function approvalStepsArb(world: World, rooms: fc.Arbitrary<string>): fc.Arbitrary<Step> {
  const asked = fc
    .record({
      room: rooms,
      tool: fc.constantFrom(...TOOLS),
      input: fc.constantFrom(...INPUTS),
      tooLong: fc.integer({ min: 1, max: 12 }).map((n) => n === 1),
    })
    .map(
      ({ room, tool, input, tooLong }): Step => ({
        kind: 'approval-asked',
        room,
        tool,
        input,
        ...(tooLong ? { tooLong } : {}),
      }),
    );
  const answer = fc
    .record({
      room: rooms,
      name: fc.constantFrom<'approve' | 'deny'>('approve', 'approve', 'deny'),
      args: fc.constantFrom('A1', 'A1', 'A1', 'A2', 'a2', '[A3]', 'A4', ''),
      user: fc.option(fc.constantFrom(...world.humans), { freq: 4, nil: undefined }),
      namesake: fc.integer({ min: 1, max: 5 }).map((n) => n === 1),
    })
    .map(
      ({ room, name, args, user, namesake }): Step => ({
        kind: 'command',
        room,
        name,
        args,
        // A human (three times in four), or (none named) an operator; a namesake is a member, never an operator.
        operator: user === undefined,
        ...(user !== undefined ? { user, ...(namesake ? { namesake } : {}) } : {}),
      }),
    );
  return fc.oneof(
    { weight: 2, arbitrary: asked },
    { weight: 4, arbitrary: answer },
    { weight: 1, arbitrary: fc.constant<Step>({ kind: 'approval-expires' }) },
  );
}

/**
 * Conversations with approvals (rule 17): agents that ask each other (the human who asked first carried through the
 * requests) and the humans, turns holding tool calls in the channels and DMs, the cards answered by the right and
 * the wrong people, expiring, denied by /pass and /reset, and restarts while they wait.
 */
const approvalsArb: fc.Arbitrary<Case> = fc
  .record({ base: worldArb, n: fc.integer({ min: 2, max: 3 }), humans: fc.integer({ min: 1, max: 3 }) })
  .map(
    ({ base, n, humans }): World => ({
      ...base,
      agents: base.agents.slice(0, n),
      humans: [...HUMANS.slice(0, humans), ...(base.access?.outsiders ?? [])],
    }),
  )
  .chain((world) => {
    const agents = world.agents.map((a) => a.name);
    const reply = (self: string): fc.Arbitrary<Reply> => {
      const others = agents.filter((a) => a !== self);
      return fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .tuple(fc.constantFrom(...others), fc.constantFrom(...PHRASES))
            .map(([n, p]): Reply => ({ kind: 'text', text: `@${n} ${p}?` })),
        },
        { weight: 4, arbitrary: replyArb(world, self) },
      );
    };
    const lists = world.agents.map((a) => fc.array(reply(a.name), { maxLength: 12 }));
    const dm = dmRoom(agents[0] ?? '', world.humans[0] ?? '');
    const members = world.humans.filter((h) => !world.access?.outsiders.includes(h));
    const said = (room: string, human: string, named: readonly string[], phrase: string): Step =>
      room === dm
        ? { kind: 'say', room, human: world.humans[0] ?? '', text: `${phrase}?` }
        : { kind: 'say', room, human, text: `${named.map((n) => `@${n} `).join('')}${phrase}?` };
    /** An answer to the room's newest card (`<card>`), or to a fixed id. */
    const answer = (room: string) =>
      fc
        .record({
          name: fc.constantFrom<'approve' | 'deny'>('approve', 'approve', 'deny'),
          args: fc.constantFrom('<card>', '<card>', '<card>', 'A1', 'a1', '[A2]', ''),
          user: fc.option(fc.constantFrom(...world.humans), { freq: 4, nil: undefined }),
          namesake: fc.integer({ min: 1, max: 3 }).map((n) => n === 1),
        })
        .map(
          ({ name, args, user, namesake }): Step => ({
            kind: 'command',
            room,
            name,
            args,
            operator: user === undefined,
            ...(user !== undefined ? { user, ...(namesake ? { namesake } : {}) } : {}),
          }),
        );
    /**
     * An episode in one room: a human asks, the turn holds calls, people answer the cards (or not), and restarts,
     * /pass, expiry, deadlines and other humans fall in between; maybe the turn ends.
     */
    const episode = fc.constantFrom(MAIN, MAIN, MAIN, MAIN, SIDE, dm).chain((room) => {
      const middle = fc.oneof(
        { weight: 4, arbitrary: approvalStepsArb(world, fc.constant(room)) },
        { weight: 5, arbitrary: answer(room) },
        { weight: 2, arbitrary: fc.constant<Step>({ kind: 'deliver', room }) },
        // A restart, and the turn taken again making its last call again (`<same>`: the room's last call).
        // … maybe after an operator approved it (it runs, once).
        {
          weight: 4,
          arbitrary: fc
            .constantFrom('<same>', '<approved>', '<approved>', '<approved>', '<denied>', '<denied>', '<denied>')
            .map((input): Step => ({ kind: 'approval-asked', room, tool: '<same>', input })),
        },
        {
          weight: 2,
          arbitrary: fc.constantFrom<Step>(
            { kind: 'restart' },
            { kind: 'approval-expires' },
            { kind: 'deadline' },
            { kind: 'caught-up', room: MAIN },
          ),
        },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom<CommandName>('pass', 'reset')
            .map((name): Step => ({ kind: 'command', room, name, args: '', operator: true })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.constantFrom(...members), fc.subarray(agents, { maxLength: 1 }), fc.constantFrom(...PHRASES))
            .map(([human, named, phrase]) => said(room, human, named, phrase)),
        },
      );
      return fc
        .record({
          opener: fc
            .tuple(
              fc.constantFrom(...members),
              fc.subarray(agents, { minLength: 1, maxLength: 2 }),
              fc.constantFrom(...PHRASES),
            )
            .map(([human, named, phrase]) => said(room, human, named, phrase)),
          middle: fc.array(middle, { minLength: 1, maxLength: 8 }),
          end: fc.boolean(),
        })
        .map(({ opener, middle: steps, end }): Step[] => [
          opener,
          ...steps,
          ...(end ? [{ kind: 'deliver', room } as const] : []),
        ]);
    });
    /** `<card>` becomes the id of the room's newest card, as far as the script can tell. */
    const numbered = (episodes: readonly Step[][]): Step[] => {
      const cards = new Map<string, number>();
      const last = new Map<string, { tool: string; input: string }>();
      return episodes.flat().flatMap((step): Step[] => {
        if (step.kind === 'approval-asked' && step.tool === '<same>') {
          const call = last.get(step.room) ?? { tool: 'bash', input: 'npm test' };
          const id = `A${Math.max(1, cards.get(step.room) ?? 0)}`;
          const approve: Step = { kind: 'command', room: step.room, name: 'approve', args: id, operator: true };
          if (step.input === '<denied>') {
            // Another human's question parks the turn (17.5); the card is denied; the other turn ends and the
            // parked one, taken again, makes its call again: it reads the denial.
            const other = said(step.room, members.at(-1) ?? '', agents.slice(-1), PHRASES[0] ?? 'what do you think');
            const deny: Step = { ...approve, name: 'deny' };
            return [other, deny, { kind: 'deliver', room: step.room }, { ...step, ...call }];
          }
          return [...(step.input === '<approved>' ? [approve] : []), { kind: 'restart' }, { ...step, ...call }];
        }
        if (step.kind === 'approval-asked') last.set(step.room, { tool: step.tool, input: step.input });
        if (step.kind === 'approval-asked' && !step.tooLong) cards.set(step.room, (cards.get(step.room) ?? 0) + 1);
        if (step.kind !== 'command' || step.args !== '<card>') return [step];
        return [{ ...step, args: `A${Math.max(1, cards.get(step.room) ?? 0)}` }];
      });
    };
    return fc.record({
      world: fc.constant(world),
      oracle: fc.tuple(...lists).map((l) => Object.fromEntries(world.agents.map((a, i) => [a.name, l[i] ?? []]))),
      steps: fc.array(episode, { minLength: 1, maxLength: 6 }).map(numbered),
    });
  });

export const caseArb: fc.Arbitrary<Case> = fc.oneof(
  { weight: 3, arbitrary: broadArb },
  { weight: 1, arbitrary: requestsArb },
  { weight: 1, arbitrary: stallsArb },
  { weight: 1, arbitrary: outsidersArb },
  { weight: 1, arbitrary: approvalsArb },
);
