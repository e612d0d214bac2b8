/**
 * One turn's history, as the bridge reads it and builds an agent's context from it, in a room of `size` messages:
 * the room's window in memory with each message's count kept (src/bridge/loop/room-window.ts) beside reading the room
 * from the store and counting every message again, as every turn did before. Alternating rounds on one SQLite file,
 * the median time per turn of each side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RoomWindows } from '../../src/bridge/loop/room-window.js';
import { DEFAULT_ALLOCATIONS } from '../../src/config/index.js';
import { buildContext } from '../../src/llm/context.js';
import { tokenCounter } from '../../src/llm/tokens.js';
import { silentLogger } from '../../src/log.js';
import { EMPTY_STATE } from '../../src/room/state.js';
import type { RoomMessage } from '../../src/room/types.js';
import { openStore, type RoomStore } from '../../src/store/index.js';

export interface TurnHistoryFigures {
  /** Median ms per turn: store read and every message counted. */
  readonly before: number;
  /** Median ms per turn: the window, counts kept. */
  readonly after: number;
}

export async function turnHistory(size: number, turns: number, rounds: number): Promise<TurnHistoryFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-turn-history-'));
  const store = openStore(path.join(dir, 'rt.db'));
  try {
    const windows = new RoomWindows({ store: store.rooms, size, encodings: ['o200k_base'], log: silentLogger() });
    const windowed = windows.store();
    const plain = await store.rooms.open('bench', 'plain');
    const kept = await store.rooms.open('bench', 'kept');
    let seq = 0;
    const say = (rooms: RoomStore, roomId: number) => {
      seq += 1;
      const text =
        `message ${seq}: the quarterly numbers are in, revenue grew by ${seq % 40}% and costs by 3%; ` +
        'the sheet is in uploads/q3.csv, @code please check the totals';
      return rooms.commit(
        roomId,
        [
          {
            type: 'message',
            message: {
              seq,
              author: 'alice',
              authorId: 'u1',
              kind: 'human',
              mentions: ['code'],
              requests: ['code'],
              audience: null,
              at: seq,
              text,
              platformIds: [`m${seq}`],
            },
          },
        ],
        { ...EMPTY_STATE, seq },
      );
    };
    for (let i = 0; i < size; i++) {
      await say(store.rooms, plain.id);
      await say(windowed, kept.id);
    }
    const counter = tokenCounter('gpt-4o-mini');
    const build = (history: RoomMessage[]) =>
      buildContext({
        agent: { name: 'code', systemPrompt: 'You write code.' },
        agentNames: ['code', 'data'],
        history,
        historyLimit: size - 1,
        situation: 'You were asked by @alice.',
        counter,
        tools: [],
        budget: { contextTokens: 128_000, reserve: 4096, allocations: DEFAULT_ALLOCATIONS },
      });
    // A turn after each new message, as in a conversation: the turn's read and build are timed, not the store's write.
    const side = async (rooms: RoomStore, roomId: number) => {
      let spent = 0n;
      for (let i = 0; i < turns; i++) {
        await say(rooms, roomId);
        const started = process.hrtime.bigint();
        await build(await rooms.history(roomId, size));
        spent += process.hrtime.bigint() - started;
      }
      return Number(spent) / 1e6 / turns;
    };
    await side(store.rooms, plain.id);
    await side(windowed, kept.id);
    const before: number[] = [];
    const after: number[] = [];
    for (let round = 0; round < rounds; round++) {
      before.push(await side(store.rooms, plain.id));
      after.push(await side(windowed, kept.id));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    return { before: median(before), after: median(after) };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
