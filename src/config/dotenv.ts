import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.js';

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUOTES = ['"', "'", '`'];

/**
 * Reads a `.env` file with Node's parser, and refuses what that parser would keep without a word: a name with a quote
 * in it, or a value that opens a quote it never closes (both would reach the bridge as typed, quote and all). A
 * byte-order mark (Windows editors save one) is dropped, so the first setting is read.
 */
export function readDotenv(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, undefined, `cannot be read: ${(error as Error).message}`);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const values = parseEnv(text) as Record<string, string>;
  const lines = text.split(/\r?\n/);
  const lineOf = (name: string) => {
    const index = lines.findIndex((line) => /^\s*(?:export\s+)?([^=]*?)\s*=/.exec(line)?.[1] === name);
    return index === -1 ? undefined : index + 1;
  };
  for (const [name, value] of Object.entries(values)) {
    if (!VARIABLE.test(name)) {
      throw new ConfigError(
        file,
        name,
        'is not a variable name (letters, digits and _; quote the value, not the name)',
        lineOf(name),
      );
    }
    const quote = QUOTES.find((mark) => value.startsWith(mark));
    if (quote && (value.length === 1 || !value.endsWith(quote))) {
      throw new ConfigError(
        file,
        name,
        `the value opens a ${quote} quote that is never closed (close it on the same line, or drop it)`,
        lineOf(name),
      );
    }
  }
  return values;
}
