import type { RESTOptions } from 'discord.js';
import { EXIT, parseFlags, UsageError } from '../../src/cli.js';
import { type Config, type Env, environmentWithDotenv, loadConfig } from '../../src/config/index.js';
import { ConfigError, describeError } from '../../src/errors.js';

/** Where a setup script reads and writes; tests pass their own. */
export interface ScriptIo {
  out(text: string): void;
  err(text: string): void;
  readonly cwd?: string;
  readonly env?: Env;
  /** REST options (tests lift the rate limit). */
  readonly rest?: Partial<RESTOptions>;
}

export function processIo(): ScriptIo {
  return { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };
}

export function noDiscordAgent(config: Config): ConfigError {
  return new ConfigError(
    config.settings.AGENTS_DIR,
    'discord.token_env',
    'no agent has a Discord bot token (name its variable in discord.token_env of the agent file)',
  );
}

/**
 * Runs a Discord setup script: no arguments but --help, configuration loaded from the environment
 * and .env, and the exit codes every script uses (0 done, 1 something to fix, 2 bad command line).
 */
export async function runScript(
  name: string,
  usage: string,
  argv: readonly string[],
  io: ScriptIo,
  body: (config: Config) => Promise<void>,
): Promise<number> {
  try {
    const flags = parseFlags(argv, { switches: ['--help'] });
    if (flags.switches.has('--help')) {
      io.out(`${usage}\n`);
      return EXIT.ok;
    }
    const cwd = io.cwd ?? process.cwd();
    await body(loadConfig(environmentWithDotenv(cwd, io.env ?? process.env), cwd));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${name}: ${error.message}\n${usage}\n`);
      return EXIT.usage;
    }
    io.err(`${name} failed: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}
