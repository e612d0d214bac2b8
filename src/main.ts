/**
 * Composition root: load config, open the store, build the sandbox and the adapters, wire them
 * to the bridge. The only file in src/ that imports adapters/ and sandbox/.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { CONSOLE_PLATFORM, ConsoleAdapter, terminalChannel } from '../adapters/console/index.js';
import type { PostableRoom } from '../adapters/web/mcp-desk.js';
import { type Bridge, createBridge, type LlmFactory } from './bridge/index.js';
import { EXIT, parseFlags, UsageError } from './cli.js';
import {
  type Config,
  dockerEngine,
  type Env,
  environmentWithDotenv,
  loadConfig,
  type Settings,
  templateDir,
} from './config/index.js';
import { watchRunning } from './config/watch.js';
import { checkDataFiles, lockDataDir, prepareDataDir } from './data-dir.js';
import { ConfigError, describeError } from './errors.js';
import { type HealthServer, startHealthServer } from './health.js';
import { lacksOpenAiKey } from './llm/endpoint-check.js';
import { checkPromptsFit } from './llm/prompt-fit.js';
import { createLogger, type Logger, silentLogger } from './log.js';
import { meteredAdapter, meteredSandbox } from './metrics.js';
import type { ChatAdapter, Sandbox } from './ports.js';
import type { CheckResult } from './self-check.js';
import { type CheckProbes, needsSandbox, sandboxCheck, selfCheck } from './startup-check.js';
import { openStoreFrom, type StorePort } from './store/index.js';
import { endsAtOnce, NothingToServeError, nothingToServe, opensTerminalRoom } from './terminal-input.js';
import { UnavailableSandbox } from './tools/unavailable-sandbox.js';
import { startTracing, type Tracing } from './trace/setup.js';

// Loaded on demand, so a platform's SDK is only loaded when an agent uses that platform.
const SANDBOX_MODULE = '../sandbox/index.js';
const DISCORD_MODULE = '../adapters/discord/index.js';
const SLACK_MODULE = '../adapters/slack/index.js';
const WEB_MODULE = '../adapters/web/index.js';

type WebOptions = { config: Config; logger: Logger; people: StorePort['people']; postable: PostableRoom[] };
type AdapterFactory = (options: { config: Config; logger: Logger }) => ChatAdapter;

export const USAGE = `Usage: npm start -- [options]     (built: node dist/src/main.js [options])

Runs the Roundtable bridge: each agent in AGENTS_DIR joins Discord and Slack with its own bot,
and the web room when WEB_PORT is set; with neither, the terminal room opens. Settings come
from the environment and .env (see .env.example).

Options:
  --console   open the terminal room even when platform tokens are configured
  --check     check settings, agent files, model endpoints, Docker, the sandbox image and the
              platform tokens, one line each, without starting; exit code 0 when all pass, 1 if not
  --help      show this help
`;

/** The command line of `npm start`; anything else is refused. */
export function parseStartArgs(argv: readonly string[]): { console: boolean; check: boolean; help: boolean } {
  const flags = parseFlags(argv, { switches: ['--console', '--check', '--help', '-h'] });
  return {
    console: flags.switches.has('--console'),
    check: flags.switches.has('--check'),
    help: flags.switches.has('--help') || flags.switches.has('-h'),
  };
}

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
  /** The one line to end with when the terminal room closes without having read a line. */
  readonly nothingToServe: string;
  readonly bridge: Bridge;
  readonly store: StorePort;
  readonly console: ConsoleAdapter | undefined;
  /** Where /healthz and /metrics are served (HEALTH_PORT; 0 picks a free port). */
  readonly healthPort: number | undefined;
  /** Where the web room listens (WEB_PORT; 0 picks a free port). */
  readonly webPort: number | undefined;
  shutdown(): Promise<void>;
}

/** Builds the Docker sandbox; when that cannot be loaded, bash answers why. */
export async function dockerSandbox(config: Pick<Config, 'settings'>, logger: Logger): Promise<Sandbox> {
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

async function probeFrom<T>(modulePath: string, name: string, input: T): Promise<readonly CheckResult[]> {
  const module = (await import(modulePath)) as Record<string, (input: T) => Promise<readonly CheckResult[]>>;
  const probe = module[name];
  if (!probe) throw new Error(`${modulePath} does not export ${name}`);
  return probe(input);
}

/** The Docker and platform probes of `--check`, each from its own module. */
export const checkProbes: CheckProbes = {
  docker: (settings: Settings) => probeFrom(SANDBOX_MODULE, 'checkDocker', settings),
  discord: (config: Config) => probeFrom(DISCORD_MODULE, 'checkDiscordTokens', config),
  slack: (config: Config) => probeFrom(SLACK_MODULE, 'checkSlackTokens', config),
  sandbox: (settings: Settings) => dockerSandbox({ settings }, silentLogger()),
};

/** Starts the bridge. Resolves once it runs; `console.finished` tells when the terminal room ended. */
export async function run(options: RunOptions = {}): Promise<Running> {
  const flags = parseStartArgs(options.argv ?? process.argv.slice(2));
  const cwd = options.cwd ?? process.cwd();
  const env = environmentWithDotenv(cwd, options.env ?? process.env);
  const config = loadConfig(env, cwd);
  checkPromptsFit(config);
  const settings = config.settings;
  const dataDir = path.resolve(cwd, settings.DATA_DIR);
  const template = templateDir(settings, cwd);
  // DOCKER_HOST and its certificates, checked now rather than at the first `bash`.
  dockerEngine(settings);
  const consoleRoom = opensTerminalRoom(config, flags.console);
  const stdin = options.stdin ?? process.stdin;
  // Input that is already over (/dev/null, an empty file) is known before anything opens.
  if (consoleRoom && !stdin.isTTY && (await endsAtOnce(stdin))) {
    throw new NothingToServeError(nothingToServe(config, flags.console));
  }
  prepareDataDir(dataDir);
  checkDataFiles(dataDir);
  // Before anything touches the store or the sandbox containers of this data folder.
  const lock = lockDataDir(dataDir);
  try {
    return await start({ options, env, config, dataDir, template, consoleRoom, consoleFlag: flags.console, lock });
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function start(input: {
  options: RunOptions;
  env: Env;
  config: Config;
  dataDir: string;
  template: string | undefined;
  consoleRoom: boolean;
  consoleFlag: boolean;
  lock: { release(): void };
}): Promise<Running> {
  const { config, dataDir, consoleRoom } = input;
  const settings = config.settings;
  // The terminal room's stdout is the transcript: logs go to a file then.
  const logFile = settings.LOG_FILE ?? (consoleRoom ? path.join(dataDir, 'roundtable.log') : undefined);
  const logger = createLogger({
    level: settings.LOG_LEVEL,
    file: logFile,
    secrets: config.secrets,
    format: settings.LOG_FORMAT,
  });
  // Off (the API's no-op tracer) unless an OTEL_EXPORTER_OTLP_* endpoint is set.
  const tracing = startTracing(input.env, { content: settings.TRACE_CONTENT === 'on', log: logger });
  try {
    return await wire({ ...input, logger, logFile, tracing });
  } catch (error) {
    // The operator reads stderr; the log keeps the detail beside what led to it.
    logger.fatal({ err: error }, 'the bridge could not start');
    throw error;
  }
}

async function wire(
  input: Parameters<typeof start>[0] & { logger: Logger; logFile: string | undefined; tracing: Tracing },
): Promise<Running> {
  const { options, config, dataDir, template, consoleRoom, lock, logger, logFile, tracing } = input;
  const settings = config.settings;
  const wantsDiscord = config.agents.some((a) => a.discord);
  const wantsSlack = config.agents.some((a) => a.slack);
  const warnings = startupWarnings(config);
  for (const warning of warnings) logger.warn(warning);

  // SQLite in the data folder, or the Postgres database DATABASE_URL names.
  const store = await openStoreFrom(settings, { dataDir, log: logger });
  const sandbox = await (options.sandbox ?? dockerSandbox)(
    {
      ...config,
      settings: { ...settings, DATA_DIR: dataDir, ...(template ? { SANDBOX_TEMPLATE_DIR: template } : {}) },
    },
    logger,
  );
  // Tell the operator now, not at the first `bash`, what the engine will refuse (in the background).
  const sandboxProblems = needsSandbox(config) ? sandboxCheck(sandbox, logger) : Promise.resolve([]);
  const adapters: ChatAdapter[] = [];
  let consoleAdapter: ConsoleAdapter | undefined;
  if (consoleRoom) {
    const stdin = options.stdin ?? process.stdin;
    consoleAdapter = new ConsoleAdapter({
      input: stdin,
      output: options.stdout ?? process.stdout,
      interactive: Boolean(stdin.isTTY),
      // With a shared store each replica's terminal is a room of its own.
      channel: terminalChannel(settings.DATABASE_URL ? (settings.REPLICA_ID ?? hostname()) : undefined),
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
  let web: { readonly port: number | undefined } | undefined;
  if (settings.WEB_PORT !== undefined) {
    type WebAdapter = ChatAdapter & { readonly port: number | undefined };
    const module = (await import(WEB_MODULE)) as { createWebAdapter: (options: WebOptions) => WebAdapter };
    const postable = consoleAdapter ? [consoleAdapter.postableRoom()] : []; // operators post there over /mcp too
    const adapter = module.createWebAdapter({ config, logger, people: store.people, postable });
    web = adapter;
    adapters.push(adapter);
  }

  const metered = adapters.map(meteredAdapter);
  const bridge = createBridge({
    config,
    store,
    sandbox: meteredSandbox(sandbox),
    adapters: metered,
    logger,
    ...(options.llm ? { llm: options.llm } : {}),
  });
  let healthServer: HealthServer | undefined;
  let down: Promise<void> | undefined;
  const watcher = watchRunning(options, settings.AGENTS_DIR, logger, (read) => bridge.applyPolicy(read));
  const shutdown = () => {
    down ??= (async () => {
      watcher.close();
      await healthServer?.close();
      await bridge.stop();
      await store.close();
      await tracing.shutdown();
      lock.release();
      logger.info('bridge stopped');
    })();
    return down;
  };
  try {
    await bridge.start();
    if (settings.HEALTH_PORT !== undefined) {
      healthServer = await startHealthServer({
        port: settings.HEALTH_PORT,
        host: settings.HEALTH_HOST,
        adapters: metered,
        store,
        leases: () => bridge.leases,
        logger,
      });
    }
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
        'Commands: /help /status /pass /reset /privacy /budget /clear /quit. Log: ' +
        (logFile ?? 'stderr');
    consoleAdapter.print(`[system]: ${banner}`);
    // After a restart: how much of the room's history the agents will see again.
    const consoleRoom = await store.rooms.open(CONSOLE_PLATFORM, consoleAdapter.channel);
    const loaded = (await store.rooms.history(consoleRoom.id, settings.HISTORY_LIMIT)).length;
    if (loaded > 0)
      consoleAdapter.print(`[system]: ${loaded} message${loaded === 1 ? '' : 's'} of history loaded for this room.`);
    for (const warning of warnings) consoleAdapter.print(`[system]: warning: ${warning}`);
    const room = consoleAdapter;
    void sandboxProblems.then((problems) => {
      for (const problem of problems) room.print(`[system]: warning: ${problem}`);
    });
  }
  return {
    nothingToServe: nothingToServe(config, input.consoleFlag),
    bridge,
    store,
    console: consoleAdapter,
    healthPort: healthServer?.port,
    webPort: web?.port,
    shutdown,
  };
}

/** What the operator should know before the first message (also logged). */
export function startupWarnings(config: Config): string[] {
  const keyless = config.agents.filter(lacksOpenAiKey).map((a) => `@${a.name}`);
  const key = `OPENAI_API_KEY is not set, so ${keyless.join(', ')} will be refused by api.openai.com (npm start -- --check)`;
  return [...(keyless.length > 0 ? [key] : []), ...(config.warnings ?? [])];
}

/** `npm start`: run until the terminal room ends or a signal arrives. */
export async function main(options: RunOptions = {}): Promise<number> {
  const out = options.stdout ?? process.stdout;
  let flags: ReturnType<typeof parseStartArgs>;
  try {
    flags = parseStartArgs(options.argv ?? process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message} (npm start -- --help lists the options)\n`);
    return EXIT.usage;
  }
  if (flags.help) {
    out.write(USAGE);
    return EXIT.ok;
  }
  if (flags.check) {
    const cwd = options.cwd ?? process.cwd();
    let env: ReturnType<typeof environmentWithDotenv>;
    try {
      env = environmentWithDotenv(cwd, options.env ?? process.env);
    } catch (error) {
      out.write(`✗ environment: ${describeError(error)}\n`);
      return EXIT.failed;
    }
    const passed = await selfCheck({
      env,
      cwd,
      probes: checkProbes,
      write: (line) => out.write(`${line}\n`),
      consoleFlag: flags.console,
      stdin: options.stdin ?? process.stdin,
    });
    return passed ? EXIT.ok : EXIT.failed;
  }
  let running: Running;
  try {
    running = await run(options);
  } catch (error) {
    const message = error instanceof ConfigError ? `Configuration error: ${error.message}` : describeError(error);
    process.stderr.write(`${message}\n`);
    return EXIT.failed;
  }
  // A library's stray promise rejection (a reconnect that gave up, say) is logged, not fatal.
  process.on('unhandledRejection', (reason) => running.bridge.log.error({ err: reason }, 'unhandled rejection'));
  let signalled = false;
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        signalled = true;
        resolve();
      });
    }
  });
  // End of the terminal room's input waits until the room settled; a signal stops turns at once.
  await Promise.race([stopped, running.console?.finished ?? new Promise<void>(() => {})]);
  await running.shutdown();
  // Piped input that ended before a single line: the room served nobody (see terminal-input.ts).
  if (!signalled && running.console && !running.console.interactive && running.console.linesRead === 0) {
    process.stderr.write(`${running.nothingToServe}\n`);
    return EXIT.failed;
  }
  return EXIT.ok;
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
