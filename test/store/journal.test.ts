import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, journaledTools } from '../../src/bridge/tool-journal.js';
import { openStore, type Store } from '../../src/store/index.js';
import { ok, type Tool, type ToolContext } from '../../src/tools/tool.js';

let dir: string;
let store: Store;
const file = () => path.join(dir, 'rt.db');

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-journal-'));
  store = openStore(file());
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('journal', () => {
  it('opens a round once per message, and a newer round supersedes the open older ones', () => {
    const a = store.journal.openRound('r', 1, 0);
    expect(store.journal.openRound('r', 1, 0)).toBeNull();
    const b = store.journal.openRound('r', 2, 0) as number;
    const other = store.journal.openRound('s', 1, 0) as number;
    store.journal.supersede('r', b);
    expect(store.journal.get(a as number)?.status).toBe('dropped');
    expect(store.journal.open().map((w) => w.id)).toEqual([b, other]);
  });

  it('finds a cut turn again under its name, one attempt more, and never reopens a finished one', () => {
    const input = { room: 'r', key: 'round:1/code', agent: 'code', parentId: 1, frame: { route: true }, now: 0 };
    const first = store.journal.beginTurn(input);
    expect([first.attempts, first.status]).toEqual([1, 'open']);
    store.close();
    store = openStore(file()); // a restart
    const again = store.journal.beginTurn(input);
    expect([again.id, again.attempts, again.frame]).toEqual([first.id, 2, { route: true }]);
    store.journal.finish(again.id, 'done', 'posted');
    store.journal.finish(again.id, 'dropped'); // finished work stays as it was
    const done = store.journal.beginTurn(input);
    expect([done.status, done.outcome, done.attempts]).toEqual(['done', 'posted', 2]);
    expect(store.journal.turnsOf(1).map((t) => t.id)).toEqual([first.id]);
  });

  it('keeps posts pending until they are known to be sent', () => {
    const room = store.channel('test', 'room');
    const a = store.journal.addPost({
      channelId: room.id,
      workId: null,
      purpose: 'system',
      agent: null,
      text: 'a',
      now: 5,
    });
    const b = store.journal.addPost({
      channelId: room.id,
      workId: null,
      purpose: 'action',
      agent: 'code',
      text: 'b',
      meta: { requests: [] },
      now: 6,
    });
    store.journal.sent(a.id, ['p1']);
    expect(store.journal.pendingPosts()).toEqual([{ ...b, meta: { requests: [] } }]);
    store.journal.failed(b.id);
    expect(store.journal.pendingPosts()).toEqual([]);
  });
});

describe('journaled tools', () => {
  const context = {} as ToolContext;
  let runs = 0;
  const tool: Tool = {
    name: 'bash',
    definition: { type: 'function', function: { name: 'bash', parameters: {} } },
    async run(args) {
      runs++;
      return ok(String((args as { command: string }).command), `ran ${runs}`);
    },
  };

  it('answers a call made before the restart from the record, and runs new ones', async () => {
    runs = 0;
    const turn = store.journal.beginTurn({ room: 'r', key: 't', agent: 'code', parentId: null, frame: {}, now: 0 });
    const [first] = journaledTools([tool], store.journal, turn.id, [], () => 0);
    expect((await first?.run({ command: 'touch a' }, context))?.output).toBe('ran 1');
    const earlier = store.journal.toolRuns(turn.id);
    const [again] = journaledTools([tool], store.journal, turn.id, earlier, () => 0);
    expect(await again?.run({ command: 'touch a' }, context)).toEqual({
      status: 'ok',
      input: 'touch a',
      output: 'ran 1',
    });
    expect((await again?.run({ command: 'touch a' }, context))?.output).toBe('ran 2'); // a second call is a new call
    expect(runs).toBe(2);
  });

  it('does not run again a call the crash cut, and says why', async () => {
    runs = 0;
    const turn = store.journal.beginTurn({ room: 'r', key: 't', agent: 'code', parentId: null, frame: {}, now: 0 });
    store.journal.toolStarted(turn.id, 'bash', canonicalJson({ command: 'rm -rf build' }), 0);
    const [again] = journaledTools([tool], store.journal, turn.id, store.journal.toolRuns(turn.id), () => 0);
    const result = await again?.run({ command: 'rm -rf build' }, context);
    expect(result?.status).toBe('failed');
    expect(result?.output).toMatch(/cut by a restart \(it may have run in part\); it was not run again/);
    expect(runs).toBe(0);
  });

  it('writes arguments in one canonical form', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x', u: undefined })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
  });
});
