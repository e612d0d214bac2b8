/**
 * The items of `--check`, in the order a new user fixes them: settings, the data folder, the database (when
 * DATABASE_URL is set), the template folder, agent files, model endpoints, Docker, MCP servers, platform tokens. Docker and the
 * platforms are probed by their own modules, handed in by main.ts (the composition root).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { accessLines } from './access/check.js';
import {
  type AgentConfig,
  type Config,
  type Env,
  loadConfig,
  readSettings,
  type Settings,
  templateDir,
} from './config/index.js';
import { checkDataFiles, dataDirSpace, lockDataDir, prepareDataDir } from './data-dir.js';
import { ConfigError, describeError, RoundtableError } from './errors.js';
import { bytesLabel, cannotCreate, freeBytes, unwritable, writeProblem } from './file-access.js';
import { checkEndpoint, hasModel, lacksOpenAiKey, type ModelList, someModels } from './llm/endpoint-check.js';
import { checkPromptsFit } from './llm/prompt-fit.js';
import { type Logger, silentLogger } from './log.js';
import { checkMcpServers } from './mcp/check.js';
import type { Sandbox } from './ports.js';
import { type CheckResult, type Probe, runChecks } from './self-check.js';
import { checkStoreFrom } from './store/index.js';
import { endsAtOnce, nothingToServe, opensTerminalRoom } from './terminal-input.js';
import { checkTraces } from './trace/check.js';

export interface CheckProbes {
  docker(settings: Settings): Promise<readonly CheckResult[]>;
  discord(config: Config): Promise<readonly CheckResult[]>;
  slack(config: Config): Promise<readonly CheckResult[]>;
  /** The sandbox, for MCP servers that run in it (`run: sandbox`): started once in a room of the check's own. */
  sandbox?(settings: Settings): Promise<Sandbox>;
}

/** Tools that run in the sandbox (the container, or its workspace folder). */
const SANDBOX_TOOLS = new Set(['bash', 'read_files', 'write_files', 'glob']);

/** Whether any agent has a tool that needs the sandbox (else Docker is not needed at all). */
export function needsSandbox(config: Config): boolean {
  return config.agents.some(
    (agent) =>
      agent.tools.some((tool) => SANDBOX_TOOLS.has(tool)) ||
      agent.mcp?.some((server) => server.kind === 'stdio' && server.run === 'sandbox'),
  );
}

const one = (ok: boolean, item: string, detail: string): readonly CheckResult[] => [{ ok, item, detail }];

function configLine(item: string, error: unknown): readonly CheckResult[] {
  // A variable's error is `environment: NAME: problem`; the line says `NAME: problem`.
  const message = describeError(error);
  return one(false, item, error instanceof ConfigError ? message.replace(/^environment: /, '') : message);
}

/** Runs every check and prints one line per item; resolves true when all passed. */
export async function selfCheck(options: {
  env: Env;
  cwd: string;
  probes: CheckProbes;
  write: (line: string) => void;
  /** `--console` given with `--check`: the terminal room would be the only room. */
  consoleFlag?: boolean;
  /** What `npm start` would read the terminal room from (default: none known, as at a terminal). */
  stdin?: (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined;
  /** Whether this runs in a container (default: asked of the file system). */
  inContainer?: boolean;
}): Promise<boolean> {
  const { env, cwd, probes, write } = options;
  let settings: Settings;
  try {
    settings = readSettings(env);
  } catch (error) {
    // Everything after this reads the settings.
    return runChecks([{ item: 'environment', probe: async () => configLine('environment', error) }], write);
  }
  let config: Config | undefined;
  const items: Array<{ item: string; probe: Probe }> = [
    { item: 'environment', probe: async () => one(true, 'environment', 'every setting is valid') },
    {
      item: 'data folder',
      probe: async () => {
        const dir = path.resolve(cwd, settings.DATA_DIR);
        prepareDataDir(dir);
        checkDataFiles(dir);
        let running = '';
        try {
          lockDataDir(dir).release();
        } catch (error) {
          if (!(error instanceof RoundtableError && error.code === 'locked')) throw error;
          running = ' (a bridge is running on it now)';
        }
        const crowded = dataDirSpace(dir);
        if (crowded) return one(false, 'data folder', `DATA_DIR: ${crowded}`);
        const free = freeBytes(dir);
        const room = free === undefined ? '' : `, ${bytesLabel(free)} free`;
        return one(true, 'data folder', `${dir} is writable${room}${running}`);
      },
    },
    // DATABASE_URL: reachable, its schema this code's (or one start brings up to date), its clock in step.
    { item: 'database', probe: () => checkStoreFrom(settings) },
    {
      item: 'sandbox template folder',
      probe: async () => {
        const dir = templateDir(settings, cwd);
        return one(true, 'sandbox template folder', dir ?? 'not set (new workspaces start empty)');
      },
    },
    {
      item: 'agent files',
      probe: async () => {
        config = loadConfig(env, cwd);
        checkPromptsFit(config);
        const names = config.agents.map((a) => `@${a.name}`).join(', ');
        const notes = (config.warnings ?? []).map((warning) => `; ${warning}`).join('');
        return one(true, 'agent files', `${config.agents.length} in ${settings.AGENTS_DIR} (${names})${notes}`);
      },
    },
    {
      item: 'rooms',
      probe: async () => {
        if (!config) return [];
        const consoleFlag = options.consoleFlag ?? false;
        const unserved = opensTerminalRoom(config, consoleFlag) ? await nobodyAtTheTerminal(options) : undefined;
        if (unserved === 'input over') return one(false, 'rooms', nothingToServe(config, consoleFlag));
        if (unserved === 'container') {
          return one(
            false,
            'rooms',
            'the terminal room only, in a container with no terminal (as docker compose up runs it), so the bridge ' +
              `would stop at once. ${nothingToServe(config, consoleFlag).replace(/^.*?\. /, '')}`,
          );
        }
        return roomsLine(config, consoleFlag);
      },
    },
    {
      item: 'log file',
      probe: async () => {
        // The log goes to stderr unless LOG_FILE is set or the terminal room opens (its stdout is the transcript).
        const terminal = config ? opensTerminalRoom(config, options.consoleFlag ?? false) : false;
        const file = settings.LOG_FILE ?? (terminal ? path.join(settings.DATA_DIR, 'roundtable.log') : undefined);
        return file ? logFileLine(path.resolve(cwd, file)) : [];
      },
    },
    { item: 'model endpoints', probe: async () => (config ? endpointLines(config) : []) },
    {
      item: 'Docker engine',
      probe: async () => {
        if (config && !needsSandbox(config)) {
          return one(true, 'Docker', 'not needed (no agent has bash or file tools)');
        }
        // The engine is asked to mount a folder of DATA_DIR: it needs the full path.
        return probes.docker({ ...settings, DATA_DIR: path.resolve(cwd, settings.DATA_DIR) });
      },
    },
    {
      item: 'access',
      // Who may make the agents act on Discord and Slack (docs/trust.md), said before the platforms are tried.
      probe: async () => (config?.agents.some((a) => a.discord || a.slack) ? accessLines(config) : []),
    },
    {
      item: 'MCP servers',
      probe: async () => {
        if (!config?.agents.some((a) => a.mcp?.length)) return [];
        const inSandbox = config.agents.some((a) => a.mcp?.some((s) => s.kind === 'stdio' && s.run === 'sandbox'));
        const sandbox =
          inSandbox && probes.sandbox
            ? await probes.sandbox({ ...settings, DATA_DIR: path.resolve(cwd, settings.DATA_DIR) })
            : undefined;
        try {
          return await checkMcpServers(config, silentLogger(), sandbox);
        } finally {
          await sandbox?.close();
        }
      },
    },
    { item: 'Discord', probe: async () => (config?.agents.some((a) => a.discord) ? probes.discord(config) : []) },
    { item: 'Slack', probe: async () => (config?.agents.some((a) => a.slack) ? probes.slack(config) : []) },
    { item: 'traces', probe: () => checkTraces(env) },
  ];
  return runChecks(
    items.map(({ item, probe }) => ({
      item,
      // A ConfigError names its file and field already; the line keeps that wording.
      probe: () => probe().catch((error: unknown) => configLine(item, error)),
    })),
    write,
  );
}

/** Files a container engine puts at the root of every container (Docker, Podman). */
const CONTAINER_MARKS = ['/.dockerenv', '/run/.containerenv'];

/**
 * Why the terminal room would serve nobody: its input is already over (/dev/null, an empty file), or this is a
 * container with no terminal (a compose service has none: `docker compose run -T` checks as the service runs;
 * `--console` asks for the terminal room on purpose). A terminal, in a container or not, has someone at it.
 */
async function nobodyAtTheTerminal(options: {
  stdin?: (NodeJS.ReadableStream & { isTTY?: boolean }) | undefined;
  inContainer?: boolean;
  consoleFlag?: boolean;
}): Promise<'input over' | 'container' | undefined> {
  const { stdin } = options;
  if (!stdin || stdin.isTTY) return undefined;
  if (await endsAtOnce(stdin)) return 'input over';
  const inContainer = options.inContainer ?? CONTAINER_MARKS.some((mark) => existsSync(mark));
  return inContainer && !options.consoleFlag ? 'container' : undefined;
}

/** Which rooms `npm start` would open: the terminal room, or each platform with its agents' identities. */
function roomsLine(config: Config, consoleFlag: boolean): readonly CheckResult[] {
  if (consoleFlag) return one(true, 'rooms', 'the terminal room only (--console)');
  if (opensTerminalRoom(config, false)) {
    return one(
      true,
      'rooms',
      'the terminal room only: no agent file has discord: or slack: tokens (npm start then needs a terminal or piped lines)',
    );
  }
  const names = (agents: readonly Config['agents'][number][]) => agents.map((a) => `@${a.name}`).join(', ');
  const platforms = [
    ['Discord', config.agents.filter((a) => a.discord)],
    ['Slack', config.agents.filter((a) => a.slack)],
  ] as const;
  const open = platforms
    .filter(([, agents]) => agents.length > 0)
    .map(([name, agents]) => `${name} as ${names(agents)}`);
  const { WEB_PORT, WEB_HOST, WEB_ROOMS } = config.settings;
  if (WEB_PORT !== undefined) {
    open.push(`the web room on ${WEB_HOST}:${WEB_PORT} (${WEB_ROOMS.map((room) => `#${room}`).join(', ')})`);
  }
  return one(true, 'rooms', open.join('; '));
}

/** Whether the log file can be appended to (or made), without making it. */
function logFileLine(file: string): readonly CheckResult[] {
  const error = unwritable(file) ?? cannotCreate(file);
  if (error) return one(false, 'log file', `LOG_FILE: ${file} ${writeProblem(file, error)}`);
  return one(true, 'log file', `${file} is writable`);
}

/**
 * One line per endpoint (and key) the agents use: reachable, key accepted, the models it has; and one ✗ line per
 * agent whose model the endpoint does not list (every call of it would fail).
 */
async function endpointLines(config: Config): Promise<CheckResult[]> {
  const groups = new Map<string, { endpoint: string; apiKey: string | undefined; agents: AgentConfig[] }>();
  for (const agent of config.agents) {
    const key = `${agent.endpoint}\n${agent.apiKey ?? ''}`;
    const group = groups.get(key) ?? { endpoint: agent.endpoint, apiKey: agent.apiKey, agents: [] };
    group.agents.push(agent);
    groups.set(key, group);
  }
  const timeoutMs = Math.min(config.settings.LLM_TIMEOUT_S, 15) * 1000;
  const results: CheckResult[] = [];
  for (const group of groups.values()) {
    const item = `model endpoint ${group.endpoint} (${group.agents.map((a) => `@${a.name}`).join(', ')})`;
    if (lacksOpenAiKey(group)) {
      results.push({ ok: false, item, detail: 'no API key: set OPENAI_API_KEY (or api_key_env in the agent file)' });
      continue;
    }
    const check = await checkEndpoint(group.endpoint, group.apiKey, timeoutMs);
    if (!check.ok) {
      const fix = check.betterBase ? `: ${baseFix(config, group.agents, check.betterBase)}` : '';
      results.push({ ok: false, item, detail: `${check.detail}${fix}` });
      continue;
    }
    const key = group.apiKey ? ', key accepted' : ', no key needed';
    results.push({ ok: true, item, detail: `${check.detail}${key}${modelsNote(check.models, group.agents)}` });
    for (const agent of group.agents) {
      if (check.models.kind !== 'listed' || hasModel(check.models.ids, agent.model)) continue;
      results.push({
        ok: false,
        item: `model of @${agent.name}`,
        detail: `${agent.file}: model: ${agent.model} is not among the models ${group.endpoint} has (it lists ${someModels(check.models.ids)})`,
      });
    }
  }
  return results;
}

/** What the endpoint line says of the agents' models. */
function modelsNote(models: ModelList, agents: readonly AgentConfig[]): string {
  if (models.kind === 'any') return `, one model (${models.id}) that answers to any model name`;
  if (models.kind !== 'listed') return '';
  const found = [...new Set(agents.map((a) => a.model).filter((model) => hasModel(models.ids, model)))];
  return found.length > 0 ? `, has ${found.join(', ')}` : '';
}

/** Where to set the base URL that works: OPENAI_BASE_URL, or the agent files' `endpoint`. */
function baseFix(config: Config, agents: readonly AgentConfig[], base: string): string {
  if (agents[0]?.endpoint === config.settings.OPENAI_BASE_URL) return `set OPENAI_BASE_URL=${base}`;
  return `set endpoint: ${base} in ${agents.map((a) => a.file).join(', ')}`;
}

/** The sandbox's start-up check, each problem logged; never rejects. */
export async function sandboxCheck(sandbox: Sandbox, logger: Logger): Promise<readonly string[]> {
  try {
    const problems = (await sandbox.check?.()) ?? [];
    for (const problem of problems) logger.warn(problem);
    return problems;
  } catch (error) {
    logger.warn({ err: error }, 'the sandbox could not be checked');
    return [];
  }
}
