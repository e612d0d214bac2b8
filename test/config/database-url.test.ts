import { describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { redact, redactUrl } from '../../src/secrets.js';
import { unreachable } from '../../src/store/postgres/pool.js';

const errorOf = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
};

describe('DATABASE_URL whose password holds an unencoded "@"', () => {
  it('redacts everything before the last "@" of the address, never a piece of the password', () => {
    expect(redactUrl('postgres://rt:p@ssword@localhost:5999/rt')).toBe('postgres://[redacted]@localhost:5999/rt');
    expect(redactUrl('postgres://rt:p@ss:w/rd@db.internal:5432/rt')).toBe('postgres://[redacted]@db.internal:5432/rt');
    expect(redact('cannot reach postgresql://u:a@b@c@[::1]:5432/x now')).toBe(
      'cannot reach postgresql://[redacted]@[::1]:5432/x now',
    );
    // An "@" in a path is no credential.
    expect(redactUrl('GET https://discord.com/api/v10/users/@me')).toBe('GET https://discord.com/api/v10/users/@me');
  });

  it('refuses a URL that cannot be read, saying how to encode the password, without showing it', () => {
    const error = errorOf(() => readSettings({ DATABASE_URL: 'postgres://rt:p@ss:w/rd@db.internal:5432/rt' }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).not.toMatch(/ss:w|rd@/);
    expect(error.message).toBe(
      'environment: DATABASE_URL: is not a valid URL: percent-encode the user name and password ' +
        '(@ as %40, : as %3A, / as %2F, # as %23, ? as %3F, % as %25; ' +
        `node -p "encodeURIComponent(process.argv[1])" 'the password' prints it) ` +
        '(got "postgres://[redacted]@db.internal:5432/rt")',
    );
  });

  it('says how to encode it when the database cannot be reached', () => {
    const error = unreachable('postgres://rt:p@ssword@localhost:5999/rt', new Error('password authentication failed'));
    expect(error.message).toBe(
      'DATABASE_URL: postgres://[redacted]@localhost:5999/rt cannot be used: password authentication failed ' +
        '(the user name or password holds an "@": write it as %40)',
    );
  });
});
