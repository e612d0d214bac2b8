/**
 * The log's trace fields (pino's mixin) with tracing off: every line keeps its own fields, none of another line's,
 * and carries no trace ids.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';

describe('log lines with tracing off', () => {
  it('keeps each line its own fields, with no trace ids', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'rt-log-')), 'bridge.log');
    const log = createLogger({ level: 'info', file, format: 'json' });
    log.error({ err: new Error('the first'), room: 'a' }, 'one');
    log.info({ agent: 'pm' }, 'two');
    const [one, two] = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(one).toMatchObject({ msg: 'one', room: 'a', err: { message: 'the first' } });
    expect(two).toMatchObject({ msg: 'two', agent: 'pm' });
    expect(two).not.toHaveProperty('room');
    expect(two).not.toHaveProperty('err');
    expect(one).not.toHaveProperty('trace_id');
  });
});
