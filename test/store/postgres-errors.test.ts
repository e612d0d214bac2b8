import { describe, expect, it } from 'vitest';
import { LeaseLostError, StoreError } from '../../src/errors.js';
import { retryable, writeError } from '../../src/store/postgres/write-errors.js';

/** An error as the pg driver gives it: a server's SQLSTATE or Node's errno code on `code`. */
const failure = (code: string | undefined, message = 'failed') => Object.assign(new Error(message), { code });

describe("Postgres store's failures", () => {
  it('takes as worth another try what may pass: a lost connection, short resources, a conflict, a shutdown', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      '08006', // connection failure
      '08001', // cannot connect
      '53100', // disk full
      '53200', // out of memory
      '53300', // too many connections
      '40001', // serialization failure
      '40P01', // deadlock
      '55P03', // lock not available
      '57P01', // admin shutdown
      '57P02', // crash shutdown
      '57P03', // cannot connect now
    ]) {
      expect({ code, retryable: retryable(failure(code)) }).toEqual({ code, retryable: true });
    }
    expect(retryable(failure(undefined, 'Connection terminated unexpectedly'))).toBe(true);
    expect(retryable(failure(undefined, 'timeout exceeded when trying to connect'))).toBe(true);
  });

  it('takes as refused again what would be: a broken constraint, a wrong statement, an error of its own', () => {
    for (const code of ['23505', '23503', '23502', '42601', '42P01', '22P02', '57014']) {
      expect({ code, retryable: retryable(failure(code)) }).toEqual({ code, retryable: false });
    }
    expect(retryable(new Error('a bug'))).toBe(false);
  });

  it('rejects with a StoreError that says so, and lets a StoreError or a lost lease through unchanged', () => {
    const full = writeError(failure('53100', 'could not extend file: No space left on device'));
    expect(full).toBeInstanceOf(StoreError);
    expect(full).toMatchObject({ retryable: true, message: 'could not extend file: No space left on device' });
    expect(writeError(failure('23505', 'duplicate key'))).toMatchObject({ retryable: false });
    const own = new StoreError('x', { retryable: true });
    expect(writeError(own)).toBe(own);
    const lost = new LeaseLostError(1, 2);
    expect(writeError(lost)).toBe(lost);
  });
});
