import { describe, expect, it } from 'vitest';
import { Causality } from '../../scripts/trace/causality.js';
import {
  collaboratorOf,
  countCollaborators,
  EVENT_LIMITS,
  eventGoalsOf,
  eventsOf,
} from '../../scripts/trace/event-figures.js';
import { type Chains, EventLedger, ROOM_LOOP } from '../../scripts/trace/events.js';
import { instrument } from '../../scripts/trace/instrument.js';
import { TRACE_KEY } from '../../scripts/trace/protocol.js';
import type { Entry } from '../../scripts/trace/route-figures.js';
import { until } from '../helpers/until.js';

/** Entries written as `file:fn`, or `file:fn@event`. */
const entries = (...written: string[]): (Entry & { event?: number })[] =>
  written.map((text) => {
    const [at = '', event] = text.split('@');
    const [file = '', fn = ''] = at.split(':');
    return event === undefined ? { file, fn } : { file, fn, event: Number(event) };
  });

const LOOP = `${ROOM_LOOP.file}:${ROOM_LOOP.deliver}`;

describe('collaborators', () => {
  it('makes each shell file, each adapter folder, src/llm and each other file of src one collaborator', () => {
    expect(collaboratorOf('src/bridge/executors/poster.ts')).toBe('src/bridge/executors/poster.ts');
    expect(collaboratorOf('src/bridge/inbound/reception.ts')).toBe('src/bridge/inbound/reception.ts');
    expect(collaboratorOf('adapters/discord/inbound.ts')).toBe('adapters/discord');
    expect(collaboratorOf('adapters/shared/split.ts')).toBe('adapters/shared');
    expect(collaboratorOf('src/llm/context.ts')).toBe('src/llm');
    expect(collaboratorOf('src/spend/meter.ts')).toBe('src/spend/meter.ts');
    expect(collaboratorOf('src/log.ts')).toBe('src/log.ts');
    for (const file of [
      'src/room/decide.ts',
      'src/room/text/mentions.ts',
      'src/store/sqlite/rooms.ts',
      'src/tools/registry.ts',
    ]) {
      expect(collaboratorOf(file)).toBeUndefined();
    }
  });

  it('counts no hop into the room, the store or the tools, but one between the collaborators either side', () => {
    const figures = countCollaborators(
      entries(
        'adapters/discord/a.ts:f',
        'adapters/discord/b.ts:g',
        'src/bridge/inbound/reception.ts:receive',
        'src/room/decide.ts:decide',
        'src/bridge/inbound/reception.ts:after',
        'src/store/sqlite/rooms.ts:commit',
        'src/tools/registry.ts:toolsFor',
        'src/bridge/executors/poster.ts:send',
        'src/llm/context.ts:build',
        'src/llm/tokens.ts:count',
        'src/bridge/executors/poster.ts:done',
      ),
    );
    expect(figures.entries).toBe(8);
    expect(figures.path).toEqual([
      'adapters/discord',
      'src/bridge/inbound/reception.ts',
      'src/bridge/executors/poster.ts',
      'src/llm',
      'src/bridge/executors/poster.ts',
    ]);
    expect(figures.hops.map((hop) => `${hop.from.fn}>${hop.to.fn}`)).toEqual([
      'g>receive',
      'after>send',
      'send>build',
      'count>done',
    ]);
    expect(figures.returns.map((hop) => hop.to.fn)).toEqual(['done']);
    expect(figures.returnsOutsideLoop.map((hop) => hop.to.fn)).toEqual(['done']);
    expect(figures.loopEntries).toBe(0);
  });

  it("counts the loop's entries, its start among them, and returns into the loop apart", () => {
    const figures = countCollaborators(
      entries(
        `${ROOM_LOOP.file}:RoomActor.take`,
        'src/room/decide.ts:decide',
        'src/bridge/executors/effects.ts:run',
        `${ROOM_LOOP.file}:RoomActor.get key`,
        'src/bridge/executors/turns.ts:start',
        `${ROOM_LOOP.file}:RoomActor.settle`,
      ),
    );
    expect(figures.loopEntries).toBe(3);
    expect(figures.returns).toHaveLength(2);
    expect(figures.returnsOutsideLoop).toEqual([]);
  });
});

describe('the route per event', () => {
  const closures = new Set(['src/bridge/bridge.ts:sink.receive', 'src/bridge/bridge.ts:preview']);

  it('splits the route by event, names who handed each to the loop, and lists closures and cross-file getters', () => {
    const route = entries(
      'adapters/discord/inbound.ts:toInbound@1',
      'src/bridge/bridge.ts:sink.receive@1',
      'src/bridge/inbound/reception.ts:Reception.message@1',
      `${LOOP}@1`,
      'src/room/draft.ts:Draft.get names@1',
      'src/bridge/executors/turns.ts:Turns.start@1',
      `${ROOM_LOOP.file}:RoomActor.get key@1`,
      'src/llm/agent-turn.ts:runAgentTurn@1',
      'src/bridge/executors/turns.ts:Turns.start/then(=>)@1',
      `${LOOP}@2`,
      'src/bridge/executors/poster.ts:Poster.send@2',
      `${ROOM_LOOP.file}:RoomActor.get key@2`,
      `${ROOM_LOOP.file}:RoomActor.get serving@2`,
      'src/bridge/bridge.ts:preview@2',
      'adapters/discord/posting.ts:send@2',
      'adapters/discord/inbound.ts:toInbound',
    );
    const events = eventsOf(
      route,
      [
        { id: 1, type: 'message' },
        { id: 2, type: 'answer' },
      ],
      closures,
    );
    expect(events.map((event) => [event.id, event.type, event.entries.length])).toEqual([
      [1, 'message', 9],
      [2, 'answer', 6],
      [0, undefined, 1],
    ]);
    const [message, answer] = events;
    expect(message?.by).toBe('src/bridge/inbound/reception.ts:Reception.message');
    expect(answer?.by).toBe('src/bridge/executors/turns.ts:Turns.start/then(=>)');
    expect(message?.figures.path).toEqual([
      'adapters/discord',
      'src/bridge/bridge.ts',
      'src/bridge/inbound/reception.ts',
      ROOM_LOOP.file,
      'src/bridge/executors/turns.ts',
      ROOM_LOOP.file,
      'src/llm',
      'src/bridge/executors/turns.ts',
    ]);
    expect(message?.figures.loopEntries).toBe(2);
    expect(message?.closures).toEqual(['sink.receive']);
    // Draft's getter is the room's own; only a collaborator's getter entered from another file counts.
    expect(message?.getters).toEqual([`${ROOM_LOOP.file}:RoomActor.get key`]);
    expect(answer?.getters).toEqual([`${ROOM_LOOP.file}:RoomActor.get key`]);
    expect(answer?.closures).toEqual(['preview']);
  });

  it('meets every goal on a narrow route and misses each one past its limit, naming the event', () => {
    const narrow = entries(
      'adapters/discord/inbound.ts:toInbound@1',
      'src/bridge/inbound.ts:receive@1',
      `${LOOP}@1`,
      'src/room/decide.ts:decide@1',
      'src/store/sqlite/rooms.ts:commit@1',
      'src/bridge/executors/turns.ts:start@1',
      'src/llm/agent-turn.ts:run@1',
      'src/llm/agent-turn.ts:done@2',
      'src/bridge/executors/turns.ts:report@2',
      `${LOOP}@2`,
      'src/bridge/executors/poster.ts:send@2',
      'adapters/discord/posting.ts:send@2',
      'adapters/discord/inbound.ts:echo',
    );
    const types = [
      { id: 1, type: 'message' },
      { id: 2, type: 'answer' },
    ];
    const goalsOf = (route: typeof narrow) => {
      const events = eventsOf(route, types, closures);
      return eventGoalsOf(events, countCollaborators(route));
    };
    const met = goalsOf(narrow);
    expect(met.map((goal) => [goal.figure, goal.met])).toEqual([
      ['1, 1, 0', true],
      ['4, 4, 0', true],
      ['0, 0, 0', true],
      ['0, 0, 0', true],
      ['0, 0, 0', true],
      ['8', true],
    ]);
    // The second event enters the loop twice, returns to the poster, reads a getter, enters a closure, hops 8 times.
    const wide = [
      ...narrow.slice(0, -1),
      ...entries(
        `${ROOM_LOOP.file}:RoomActor.get key@2`,
        'src/bridge/executors/poster.ts:sent@2',
        'src/bridge/bridge.ts:preview@2',
        'src/bridge/executors/effects.ts:run@2',
      ),
    ];
    const missed = goalsOf(wide);
    expect(missed.map((goal) => goal.met)).toEqual([false, false, false, false, false, true]);
    expect(missed[0]?.where).toEqual(['event 2 (answer): entered 2 times, by RoomActor.deliver, RoomActor.get key']);
    expect(missed[1]?.figure).toBe('4, 8');
    expect(missed[2]?.where).toEqual(['event 2 (answer): src/bridge/executors/poster.ts']);
    expect(missed[3]?.where).toEqual(['event 2 (answer): preview']);
    expect(missed[4]?.where).toEqual([`event 2 (answer): ${ROOM_LOOP.file}:RoomActor.get key`]);
    const long = entries(...Array.from({ length: EVENT_LIMITS.routeHops + 2 }, (_, i) => `src/f${i % 2}.ts:f@1`));
    expect(goalsOf(long).at(-1)).toMatchObject({ figure: String(EVENT_LIMITS.routeHops + 1), met: false });
  });
});

describe('telling events apart', () => {
  /** Chains as the recorder sees them: the running one, and new ones when the ledger branches. */
  const chains = () => {
    let made = 1;
    const state = {
      chain: 1,
      branch() {
        made += 1;
        state.chain = made;
        return made;
      },
    } satisfies Chains;
    return state;
  };
  const [file, deliver, take] = [ROOM_LOOP.file, ROOM_LOOP.deliver, ROOM_LOOP.take];

  it("binds an arrival's chain to the event it hands the loop, and hands an event from another's work a new chain", () => {
    const ledger = new EventLedger();
    const at = chains();
    expect(ledger.enter('adapters/discord/inbound.ts', 'toInbound', undefined, at)).toBe(1);
    expect(ledger.enter(file, deliver, { type: 'message' }, at)).toBe(1);
    expect(ledger.enter(file, take, undefined, at)).toBe(1);
    expect(ledger.enter('src/bridge/executors/turns.ts', 'start', undefined, at)).toBe(1);
    // The turn's answer comes back in the message's chain: it is an event of its own from the loop on.
    expect(ledger.enter(file, deliver, { type: 'answer' }, at)).toBe(2);
    expect(ledger.enter(file, take, undefined, at)).toBe(2);
    expect(ledger.events).toEqual([
      { id: 1, type: 'message' },
      { id: 2, type: 'answer' },
    ]);
    expect([ledger.eventOf(1), ledger.eventOf(2), ledger.eventOf(3)]).toEqual([1, 2, undefined]);
  });

  it('gives an event queued behind another the chain its take starts, not the one it was taken in', () => {
    const ledger = new EventLedger();
    const at = chains();
    ledger.enter(file, deliver, { type: 'message' }, at);
    // While the loop is busy with the message, the post's outcome is handed on in a chain of its own.
    const other = { chain: 7, branch: () => 99 };
    ledger.enter(file, deliver, { type: 'posted' }, other);
    ledger.enter(file, take, undefined, at);
    // The loop, still in the message's chain, takes the waiting event next.
    expect(ledger.enter(file, take, undefined, at)).toBe(2);
    expect([ledger.eventOf(1), ledger.eventOf(7), ledger.eventOf(2)]).toEqual([1, 2, 2]);
  });
});

describe('the instrumentation for events', () => {
  it("hands the recorder the loop's first argument and lists the composition root's closures", () => {
    const code = `
      class Actor { deliver(event) { return event.type; } other(event) { return event; } }
      function compose() { const setup = () => 1; return { setup, run() { return [1].map((v) => v); } }; }
      out.type = new Actor().deliver({ type: 'message' });
      new Actor().other({ type: 'x' });
    `;
    const done = instrument(code, 'src/x.ts', { withArgument: ['Actor.deliver'], enclosedBy: 'compose' });
    expect(done.enclosed).toEqual(['setup', 'compose/{run}', 'compose/{run}/map(=>)']);
    const recorded: unknown[][] = [];
    const global = globalThis as Record<symbol, unknown>;
    global[Symbol.for(TRACE_KEY)] = (...args: unknown[]) => recorded.push(args);
    try {
      const out: Record<string, unknown> = {};
      new Function('out', done.code)(out);
      expect(out.type).toBe('message');
    } finally {
      delete global[Symbol.for(TRACE_KEY)];
    }
    expect(recorded).toEqual([
      ['src/x.ts', 'Actor.deliver', { type: 'message' }],
      ['src/x.ts', 'Actor.other', undefined],
    ]);
  });
});

describe('chains of asynchronous work', () => {
  it('starts a chain per callback of an older resource, carries it on, and branches where told', async () => {
    const causality = new Causality();
    causality.enable();
    const seen = new Map<string, number>();
    const note = (what: string) => seen.set(what, causality.chain);
    let fire: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      fire = resolve;
    });
    try {
      const interval = setInterval(() => note(`timer ${seen.size}`), 1);
      await new Promise<void>((resolve) => setImmediate(resolve));
      causality.watching = true;
      setImmediate(() => {
        note('work');
        setTimeout(() => note('a timer the work set'), 1);
        causality.branch();
        note('after the branch');
        void Promise.resolve().then(() => note('a microtask after the branch'));
        fire();
      });
      await ready;
      await until(
        () => seen.has('a timer the work set') && [...seen.keys()].filter((k) => k.startsWith('timer')).length >= 2,
      );
      clearInterval(interval);
      causality.watching = false;
      expect(seen.get('a timer the work set')).toBe(seen.get('work'));
      expect(seen.get('after the branch')).not.toBe(seen.get('work'));
      expect(seen.get('a microtask after the branch')).toBe(seen.get('after the branch'));
      const timers = [...seen].filter(([what]) => what.startsWith('timer')).map(([, chain]) => chain);
      expect(new Set(timers).size).toBe(timers.length);
      expect(timers).not.toContain(seen.get('work'));
    } finally {
      causality.disable();
    }
  });
});
