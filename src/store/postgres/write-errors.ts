/** Postgres's failures, as the store port reports them: worth another try, or not. */
import { LeaseLostError, StoreError } from '../../errors.js';

/**
 * SQLSTATEs of a failure that may pass: a lost connection (class 08), the server short of resources (class 53: disk
 * full, out of memory, too many connections), a serialization failure or deadlock (40001, 40P01), a lock not available
 * (55P03), an operator's or a crash's shutdown, or a server not yet taking connections (57P01-57P03).
 */
const RETRYABLE_STATE = /^(08|53)...$|^(40001|40P01|55P03|57P01|57P02|57P03)$/;

/** Node's codes for a connection that could not be made or was lost (a server restarting, a network failing). */
const RETRYABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

/** The pg driver's own words for a connection lost or not given in time (it sets no code on them). */
const RETRYABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i;

/** Whether a failure of a statement may pass if the same statement is tried again later. */
export function retryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (RETRYABLE_STATE.test(code) || RETRYABLE_ERRNO.has(code))) return true;
  const message = error instanceof Error ? error.message : '';
  return !(typeof code === 'string') && RETRYABLE_MESSAGE.test(message);
}

/**
 * A failed statement as a StoreError: retryable when Postgres could not do it now (see `retryable`); not when it
 * would be refused again (a broken constraint, a statement that is wrong). A StoreError, and a lease lost (which the
 * room takes as its own answer), pass unchanged.
 */
export function writeError(error: unknown): StoreError | LeaseLostError {
  if (error instanceof StoreError || error instanceof LeaseLostError) return error;
  const message = error instanceof Error ? error.message || String((error as { code?: unknown }).code) : String(error);
  return new StoreError(message, { cause: error, retryable: retryable(error) });
}
