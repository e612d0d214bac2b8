/**
 * Composition root: load config, open the store, build the sandbox and the adapters, wire them
 * to the bridge. The only file in src/ that imports adapters/ and sandbox/.
 */
import path from 'node:path';
import { CONSOLE_PLATFORM, CONSOLE_ROOM, ConsoleAdapter } from '../adapters/console/index.js';
import { type Bridge, createBridge, type LlmFactory } from './bridge/index.js';
import { type Config, environmentWithDotenv, loadConfig } from './config/index.js';
import { ConfigError, describeError } from './errors.js';
import { createLogger, type Logger } from './log.js';
import type { ChatAdapter, Sandbox } from './ports.js';
import { openStore, type Store } from './store/index.js';
import { UnavailableSandbox } from './tools/unavailable-sandbox.js';

// Loaded on demand, so a platform's SDK is only loaded when an agent uses that platform.
const SANDBOX_MODULE = '../sandbox/index.js';
const DISCORD_MODULE = '../adapters/discord/index.js';
const SLACK_MODULE = '../adapters/slack/index.js';

type AdapterFactory = (options: { config: Config; logger: Logger }) => ChatAdapter;

export interface RunOptions {
  readonly argv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout?: NodeJS.WritableStream;
  /** Replaces the sandbox (the demo passes its own when Docker is absent). */
  readonly sandbox?: (config: Config, logger: Logger) => Promise<Sandbox>;
  readonly llm?: LlmFactory;
  /** A banner printed when the terminal room opens. */
  readonly banner?: string;
}

export interface Running {
  readonly bridge: Bridge;
  readonly store: Store;
  readonly console: ConsoleAdapter | undefined;
  shutdown(): Promise<void>;
}

/** Builds the Docker sandbox; when that cannot be loaded, bash answers why. */
export async function dockerSandbox(config: Config, logger: Logger): Promise<Sandbox> {
  try {
    const module = (await import(SANDBOX_MODULE)) as {
      createDockerSandbox: (options: { settings: Config['settings']; logger: Logger }) => Sandbox;
    };
    return module.createDockerSandbox({ settings: config.settings, logger });
  } catch (error) {
    logger.warn({ err: error }, 'the Docker sandbox could not be loaded');
    return new UnavailableSandbox(`the sandbox could not be loaded (${describeError(error)})`);
  }
}

async function platformAdapter(modulePath: string, factory: string, config: Config, logger: Logger) {
  const module = (await import(modulePath)) as Record<string, AdapterFactory>;
  const create = module[factory];
  if (!create) throw new Error(`${modulePath} does not export ${factory}`);
  return create({ config, logger });
}

/** Starts the bridge. Resolves once it runs; `console.finished` tells when the terminal room ended. */
export async function run(options: RunOptions = {}): Promise<Running> {
  const argv = options.argv ?? process.argv.slice(2);
  const cwd = options.cwd ?? process.cwd();
  const env = environmentWithDotenv(cwd, options.env ?? process.env);
  const config = loadConfig(env, cwd);
  const settings = config.settings;
  const dataDir = path.resolve(cwd, settings.DATA_DIR);

  const wantsDiscord = config.agents.some((a) => a.discord);
  const wantsSlack = config.agents.some((a) => a.slack);
  const consoleRoom = argv.includes('--console') || (!wantsDiscord && !wantsSlack);
  // The terminal room's stdout is the transcript: logs go to a file then.
  const logFile = settings.LOG_FILE ?? (consoleRoom ? path.join(dataDir, 'roundtable.log') : undefined);
  const logger = createLogger({
    level: settings.LOG_LEVEL,
    file: logFile,
    secrets: config.secrets,
    format: settings.LOG_FORMAT,
  });

  const store = openStore(path.join(dataDir, 'roundtable.db'));
  const sandbox = await (options.sandbox ?? dockerSandbox)(
    { ...config, settings: { ...settings, DATA_DIR: dataDir } },
    logger,
  );
  const adapters: ChatAdapter[] = [];
  let consoleAdapter: ConsoleAdapter | undefined;
  if (consoleRoom) {
    const stdin = options.stdin ?? process.stdin;
    consoleAdapter = new ConsoleAdapter({
      input: stdin,
      output: options.stdout ?? process.stdout,
      interactive: Boolean(stdin.isTTY),
    });
    adapters.push(consoleAdapter);
  } else {
    if (wantsDiscord) {
      adapters.push(await platformAdapter(DISCORD_MODULE, 'createDiscordAdapter', config, logger));
    }
    if (wantsSlack) {
      adapters.push(await platformAdapter(SLACK_MODULE, 'createSlackAdapter', config, logger));
    }
  }

  const bridge = createBridge({
    config,
    store,
    sandbox,
    adapters,
    logger,
    ...(options.llm ? { llm: options.llm } : {}),
  });
  let down: Promise<void> | undefined;
  const shutdown = () => {
    down ??= (async () => {
      await bridge.stop();
      store.close();
      logger.info('bridge stopped');
    })();
    return down;
  };
  try {
    await bridge.start();
  } catch (error) {
    await shutdown();
    throw error;
  }
  logger.info(
    { agents: config.agents.map((a) => a.name), adapters: adapters.map((a) => a.platform) },
    'bridge started',
  );
  if (consoleAdapter) {
    const banner =
      options.banner ??
      `Roundtable terminal room. Agents: ${config.agents.map((a) => `@${a.name}`).join(', ')}. ` +
        'Commands: /help /status /pass /reset /privacy /clear /quit. Log: ' +
        (logFile ?? 'stderr');
    consoleAdapter.print(`[system]: ${banner}`);
    // After a restart: how much of the room's history the agents will see again.
    const loaded = store.history(store.channel(CONSOLE_PLATFORM, CONSOLE_ROOM).id, settings.HISTORY_LIMIT).length;
    if (loaded > 0)
      consoleAdapter.print(`[system]: ${loaded} message${loaded === 1 ? '' : 's'} of history loaded for this room.`);
  }
  return { bridge, store, console: consoleAdapter, shutdown };
}

/** `npm start`: run until the terminal room ends or a signal arrives. */
export async function main(options: RunOptions = {}): Promise<number> {
  let running: Running;
  try {
    running = await run(options);
  } catch (error) {
    const message = error instanceof ConfigError ? `Configuration error: ${error.message}` : describeError(error);
    process.stderr.write(`${message}\n`);
    return 1;
  }
  // A library's stray promise rejection (a reconnect that gave up, say) is logged, not fatal.
  process.on('unhandledRejection', (reason) => running.bridge.log.error({ err: reason }, 'unhandled rejection'));
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  // End of the terminal room's input waits until the room settled; a signal stops turns at once.
  await Promise.race([stopped, running.console?.finished ?? new Promise<void>(() => {})]);
  await running.shutdown();
  return 0;
}

const isEntry = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isEntry) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${describeError(error)}\n`);
      process.exit(1);
    },
  );
}
