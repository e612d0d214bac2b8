import { executionAsyncId } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { Causality } from '../../scripts/trace/causality.js';
import { instrument } from '../../scripts/trace/instrument.js';
import { TRACE_KEY } from '../../scripts/trace/protocol.js';
import {
  countRoute,
  type Entry,
  goalsOf,
  hopsByArea,
  LIMITS,
  separateRoute,
} from '../../scripts/trace/route-figures.js';
import { exitCodeOf, main } from '../../scripts/trace-route.js';
import { until } from '../helpers/until.js';

/** Entries written as `file:fn`. */
const entries = (...written: string[]): Entry[] =>
  written.map((text) => {
    const [file = '', fn = ''] = text.split(':');
    return { file, fn };
  });

describe('the route figures', () => {
  it('counts a hop for each pair of consecutive entries in different files, and a return where the file was left before', () => {
    const figures = countRoute(entries('a.ts:f', 'a.ts:g', 'b.ts:h', 'c.ts:i', 'b.ts:j', 'a.ts:k', 'a.ts:l', 'c.ts:m'));
    expect(figures.entries).toBe(8);
    expect(figures.hops.map((hop) => `${hop.from.fn}>${hop.to.fn}`)).toEqual(['g>h', 'h>i', 'i>j', 'j>k', 'l>m']);
    expect(figures.returns.map((hop) => hop.to.fn)).toEqual(['j', 'k', 'm']);
    expect(figures.returns.map((hop) => hop.at)).toEqual([4, 5, 7]);
  });

  it('lists each file with its entries and the hops into it, most entries first', () => {
    const figures = countRoute(entries('a.ts:f', 'a.ts:g', 'b.ts:h', 'c.ts:i', 'b.ts:j', 'a.ts:k', 'a.ts:l', 'c.ts:m'));
    expect(figures.files).toEqual([
      { file: 'a.ts', entries: 4, enteredBy: 1, returns: 1 },
      { file: 'b.ts', entries: 2, enteredBy: 2, returns: 1 },
      { file: 'c.ts', entries: 2, enteredBy: 2, returns: 1 },
    ]);
  });

  it('counts nothing for a route that stays in one file', () => {
    const figures = countRoute(entries('a.ts:f', 'a.ts:g', 'a.ts:f'));
    expect(figures.hops).toEqual([]);
    expect(figures.files).toEqual([{ file: 'a.ts', entries: 3, enteredBy: 0, returns: 0 }]);
  });

  it('misses the shell goal naming the shell file entered more than three times and the functions it was entered by', () => {
    const route = entries(
      'src/bridge/loop/room-actor.ts:RoomActor.deliver',
      'src/room/decide.ts:decide',
      'src/bridge/loop/room-actor.ts:RoomActor.get key',
      'src/room/decide.ts:decide',
      'src/bridge/loop/room-actor.ts:RoomActor.get key',
      'src/bridge/executors/turns.ts:Turns.start',
      'src/bridge/loop/room-actor.ts:RoomActor.deliver',
      'src/llm/context.ts:buildContext',
      'src/bridge/loop/room-actor.ts:RoomActor.get key',
    );
    const shell = goalsOf(countRoute(route)).find((goal) => goal.name.includes('shell'));
    expect(shell).toMatchObject({ met: false, figure: '4' });
    expect(shell?.where).toEqual([
      'src/bridge/loop/room-actor.ts entered 4 times, by RoomActor.get key ×3, RoomActor.deliver ×1',
    ]);
    const fewer = goalsOf(countRoute(route.slice(0, -1))).find((goal) => goal.name.includes('shell'));
    expect(fewer).toMatchObject({ met: true, figure: '3', where: [] });
  });

  it('meets the hop and return goals at their limits and misses them one past', () => {
    // Alternating between two files: every entry after the first is a hop, every one after the second a return.
    const alternating = (count: number) =>
      entries(...Array.from({ length: count }, (_, i) => (i % 2 === 0 ? 'src/a.ts:f' : 'src/b.ts:g')));
    const at = (count: number) => goalsOf(countRoute(alternating(count))).map((goal) => goal.met);
    expect(at(LIMITS.returns + 2)).toEqual([true, true, true]);
    expect(at(LIMITS.returns + 3)).toEqual([true, false, true]);
    expect(at(LIMITS.hops + 1)).toEqual([true, false, true]);
    expect(at(LIMITS.hops + 2)).toEqual([false, false, true]);
  });

  it('counts hops by area, folding the folders under an area into it', () => {
    const figures = countRoute(
      entries('adapters/discord/a.ts:f', 'src/room/decide.ts:d', 'src/room/text/mentions.ts:m', 'src/log.ts:l'),
    );
    expect(hopsByArea(figures)).toEqual([
      { from: 'adapters/discord', to: 'src/room', hops: 1 },
      { from: 'src/room', to: 'src', hops: 1 },
      { from: 'src/room', to: 'src/room', hops: 1 },
    ]);
  });

  it("keeps the entries of the message's origin as the route and sets other origins' entries apart", () => {
    const recorded = [
      { file: 'src/bridge/executors/timers.ts', fn: 'Timers.fire', origin: 7 },
      { file: 'adapters/discord/discord-adapter.ts', fn: 'DiscordAdapter.onMessage', origin: 3 },
      { file: 'src/bridge/inbound/reception.ts', fn: 'Reception.receive', origin: 3 },
      { file: 'src/bridge/executors/timers.ts', fn: 'Timers.fire', origin: 7 },
      { file: 'src/bridge/executors/poster.ts', fn: 'Poster.send', origin: 3 },
    ];
    const { route, background, origin } = separateRoute(recorded);
    expect(origin).toBe(3);
    expect(route.map((entry) => entry.fn)).toEqual(['DiscordAdapter.onMessage', 'Reception.receive', 'Poster.send']);
    expect(background.map((entry) => entry.origin)).toEqual([7, 7]);
  });

  it('exits 1 only with --check and a goal missed', () => {
    const missed = goalsOf(countRoute(entries(...Array.from({ length: 40 }, (_, i) => `src/f${i % 2}.ts:f`))));
    const met = goalsOf(countRoute(entries('src/a.ts:f')));
    expect(exitCodeOf(missed, ['--check'])).toBe(1);
    expect(exitCodeOf(missed, [])).toBe(0);
    expect(exitCodeOf(met, ['--check'])).toBe(0);
  });
});

describe('the instrumentation', () => {
  /** Runs instrumented script code with a recorder in place; returns what it computed and what was recorded. */
  function runInstrumented(code: string): { out: Record<string, unknown>; recorded: string[] } {
    const recorded: string[] = [];
    const key = Symbol.for(TRACE_KEY);
    const global = globalThis as Record<symbol, unknown>;
    global[key] = (file: string, fn: string) => recorded.push(`${file}:${fn}`);
    try {
      const out: Record<string, unknown> = {};
      new Function('out', instrument(code, 'src/sample.ts').code)(out);
      return { out, recorded };
    } finally {
      delete global[key];
    }
  }

  const sample = `
    function add(a, b) { 'use strict'; return a + b; }
    class Base { constructor(x) { this.x = x; } }
    class Counter extends Base {
      constructor() { super(1); this.n = 0; }
      get size() { return this.n; }
      bump = () => { this.n += 1; return this; };
      twice() { return [1, 2].map((v) => v * 2); }
    }
    const pair = (a) => ({ a, b: a + 1 });
    const helpers = { shout(text) { return text.toUpperCase(); } };
    function* count() { yield 1; yield 2; }
    const c = new Counter();
    c.bump().bump();
    out.sum = add(2, 3);
    out.size = c.size;
    out.twice = c.twice();
    out.pair = pair(4);
    out.shout = helpers.shout('hi');
    out.counted = [...count()];
    out.strict = (function () { 'use strict'; return this === undefined; })();
  `;

  it('records each function entry by file and name, and changes nothing the code computes', () => {
    const plain: Record<string, unknown> = {};
    new Function('out', sample)(plain);
    const { out, recorded } = runInstrumented(sample);
    expect(out).toEqual(plain);
    expect(out.strict).toBe(true);
    expect(recorded).toEqual([
      'src/sample.ts:Counter.constructor',
      'src/sample.ts:Base.constructor',
      'src/sample.ts:Counter.bump',
      'src/sample.ts:Counter.bump',
      'src/sample.ts:add',
      'src/sample.ts:Counter.get size',
      'src/sample.ts:Counter.twice',
      'src/sample.ts:Counter.twice/map(=>)',
      'src/sample.ts:Counter.twice/map(=>)',
      'src/sample.ts:pair',
      'src/sample.ts:helpers.shout',
      'src/sample.ts:count',
      'src/sample.ts:<module>/function',
    ]);
  });

  it("names a function by the compiler's kept name and leaves the compiler's helpers out", () => {
    const emitted =
      'var __defProp=Object.defineProperty;var __name=(target,value)=>__defProp(target,"name",{value,configurable:true});' +
      'const same=__name((a,b)=>a===b,"same");out.same=same(1,1);';
    const { out, recorded } = runInstrumented(emitted);
    expect(out.same).toBe(true);
    expect(recorded).toEqual(['src/sample.ts:same']);
  });

  it('keeps a source map comment last', () => {
    const code = 'function f(){return 1}\n//# sourceMappingURL=data:application/json;base64,e30=';
    const { code: out } = instrument(code, 'src/x.ts');
    expect(out.endsWith('\n//# sourceMappingURL=data:application/json;base64,e30=')).toBe(true);
  });
});

describe('the origins of asynchronous work', () => {
  it('follows work through awaits and promises it resolves, and tells a timer set before apart', async () => {
    const causality = new Causality();
    causality.enable();
    const seen: { what: string; origin: number }[] = [];
    const note = (what: string) => seen.push({ what, origin: causality.originOf(executionAsyncId()) });
    try {
      let open: () => void = () => {};
      // Made before watching: a promise with work chained on it, and an interval.
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      void gate.then(() => note('chained before, resolved by the work'));
      const interval = setInterval(() => note('timer'), 1);
      await new Promise<void>((resolve) => setImmediate(resolve));
      causality.watching = true;
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          note('work');
          void Promise.resolve().then(() => note('after a microtask'));
          setTimeout(() => note('a timer the work set'), 1);
          open();
          resolve();
        }),
      );
      await until(() =>
        ['timer', 'a timer the work set', 'chained before, resolved by the work'].every((what) =>
          seen.some((s) => s.what === what),
        ),
      );
      clearInterval(interval);
      causality.watching = false;
      const origin = (what: string) => seen.find((s) => s.what === what)?.origin;
      const work = origin('work');
      expect(origin('after a microtask')).toBe(work);
      expect(origin('a timer the work set')).toBe(work);
      expect(origin('chained before, resolved by the work')).toBe(work);
      expect(origin('timer')).not.toBe(work);
      expect(causality.typeOf(origin('timer') ?? -1)).toBe('Timeout');
    } finally {
      causality.disable();
    }
  });
});

describe('npm run trace:route', () => {
  it("traces one message's route from the Discord adapter through decide to the reply's post and its echo", async () => {
    let printed = '';
    const { code, report } = await main([], (text) => {
      printed += text;
    });
    expect(code).toBe(0);
    expect(report.run.reply).toBe('Hello, Alice.');
    const files = report.route.map((entry) => entry.file);
    expect(files[0]).toMatch(/^adapters\/discord\//);
    expect(files).toContain('src/room/decide.ts');
    expect(files).toContain('src/bridge/executors/poster.ts');
    expect(files.at(-1)).toMatch(/^(adapters|src)\//);
    // The reply leaves through the adapter after the room decided on the model's answer.
    const decided = files.lastIndexOf('src/room/decide.ts');
    expect(files.slice(decided).some((file) => file.startsWith('adapters/discord/'))).toBe(true);
    expect(report.run.instrumented).toBeGreaterThan(500);
    expect(report.figures.entries).toBe(report.route.length);
    expect(printed).toContain(`hops ${report.figures.hops.length}, returns ${report.figures.returns.length}`);
    expect(printed).toMatch(/file-level hops: \d+ \(goal <= 30\): (met|MISSED)/);
    expect(printed).toMatch(/file-level returns to a file already left: \d+ \(goal <= 10\): (met|MISSED)/);
    expect(printed).toMatch(/entries into any one shell file \(src\/bridge\/\*\): \d+ \(goal <= 3\): (met|MISSED)/);
    // Recorded until the echo is taken: the route goes on past the POST, through the message, the turn's answer and
    // the post's outcome, each an event of the loop; the echo (the bot's own message back through the gateway) is
    // dropped before the loop, as the bridge's own: it is no event.
    expect(report.toPost.entries).toBeLessThan(report.figures.entries);
    const types = report.events.map((event) => event.type);
    expect(types[0]).toBe('message');
    expect(types).toContain('answer');
    expect(types).toContain('posted');
    expect(types.filter((type) => type === 'message')).toHaveLength(1);
    for (const event of report.events.filter((e) => e.id !== 0)) expect(event.figures.loopEntries).toBeGreaterThan(0);
    expect(report.events[0]?.by).toMatch(/^src\/(bridge|access)\//);
    expect(report.collaborators.hops.length).toBeLessThan(report.figures.hops.length);
    expect(printed).toMatch(/collaborator level: hops \d+, returns \d+/);
    expect(printed).toMatch(/the loop entered, per event: [\d, ]+ \(goal 1 each\): (met|MISSED)/);
    expect(printed).toMatch(/collaborator hops, per event: [\d, ]+ \(goal <= 5 each\): (met|MISSED)/);
    expect(printed).toMatch(/returns outside the loop, per event: [\d, ]+ \(goal 0 each\): (met|MISSED)/);
    expect(printed).toMatch(/composition closures on the route, per event: [\d, ]+ \(goal none\): (met|MISSED)/);
    expect(printed).toMatch(/cross-file getters on the route, per event: [\d, ]+ \(goal none\): (met|MISSED)/);
    expect(printed).toMatch(/collaborator hops, the message with its reply and echo: \d+ \(goal <= 20\): (met|MISSED)/);
  }, 240_000);
});
