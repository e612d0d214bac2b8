/**
 * `npm run slack:manifest -- <agent> [--json] [--request-url https://host/slack/events/<agent>]`
 * prints the Slack app manifest for one agent file. It reads the agent files only (no
 * tokens needed: the manifest comes before the app and its tokens exist).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { EXIT, parseFlags, UsageError } from '../../src/cli.js';
import { type FrontMatter, parseAgentFile } from '../../src/config/agent-file.js';
import { type Env, environmentWithDotenv, readSettings } from '../../src/config/index.js';
import { ConfigError, describeError } from '../../src/errors.js';
import { buildManifest, type ManifestAgent } from './manifest.js';

export const MANIFEST_USAGE =
  'usage: npm run slack:manifest -- <agent> [--json] [--request-url https://host/slack/events/<agent>]';

/**
 * The control app: the agent marked `control` (in `slack:` or at the top), else the first agent with
 * Slack keys, else (before any tokens exist) the first agent file. Only it carries the commands.
 */
function controlOf(fronts: readonly FrontMatter[]): FrontMatter | undefined {
  return markedControl(fronts) ?? fronts.find((f) => f.slack) ?? fronts[0];
}

/** The agent marked `control` (in `slack:` or at the top), if any. */
function markedControl(fronts: readonly FrontMatter[]): FrontMatter | undefined {
  return fronts.find((f) => f.slack?.control ?? f.control);
}

/**
 * The one-line warning for a manifest printed before any agent file marks the control app: the app that gets the
 * commands is a guess (the first agent with Slack keys, or the first file), and a later `control: true` elsewhere
 * leaves the app the commands belong to without them.
 */
export function unmarkedControlWarning(agentsDir: string, name: string): string | undefined {
  const fronts = readFronts(agentsDir).map((entry) => entry.front);
  if (markedControl(fronts)) return undefined;
  const control = controlOf(fronts);
  if (!control || control.name.toLowerCase() === name.toLowerCase()) return undefined;
  return `slack:manifest: warning: no agent file sets control: true, so the slash commands go to @${control.name}'s app, not @${name}'s; mark the control app with "control: true" in its agent file, then print the manifests again\n`;
}

function readFronts(agentsDir: string): Array<{ file: string; front: FrontMatter }> {
  return readdirSync(agentsDir)
    .filter((file) => file.endsWith('.md') && !file.startsWith('.') && file.toLowerCase() !== 'readme.md')
    .sort()
    .map((file) => ({
      file,
      front: parseAgentFile(path.join(agentsDir, file), readFileSync(path.join(agentsDir, file), 'utf8')).front,
    }));
}

/** Finds `name` among the agent files in `agentsDir` and says how its Slack app is set up. */
export function manifestAgent(agentsDir: string, name: string, requestUrl?: string): ManifestAgent {
  const entries = readFronts(agentsDir);
  const files = entries.map((entry) => entry.file);
  const fronts = entries.map((entry) => entry.front);
  const index = fronts.findIndex((f) => f.name.toLowerCase() === name.toLowerCase());
  const front = fronts[index];
  if (!front) {
    throw new ConfigError(
      agentsDir,
      undefined,
      `no agent named "${name}" (agents: ${fronts.map((f) => f.name).join(', ')})`,
    );
  }
  const file = path.join(agentsDir, files[index] ?? '');
  // HTTP mode when asked for with --request-url, or when the file has a signing secret and no app token.
  const httpInFile = Boolean(front.slack?.signing_secret_env) && !front.slack?.app_token_env;
  if (requestUrl && front.slack?.app_token_env) {
    throw new UsageError(
      `--request-url: ${file} sets slack.app_token_env, so @${front.name} uses Socket Mode; for HTTP mode remove app_token_env and set signing_secret_env`,
    );
  }
  if (requestUrl && !/^https:\/\/[^\s/]+/.test(requestUrl)) {
    throw new UsageError(`--request-url: Slack only calls https:// URLs (got "${requestUrl}")`);
  }
  const socketMode = !requestUrl && !httpInFile;
  return {
    name: front.name,
    control: controlOf(fronts) === front,
    socketMode,
    requestUrl: requestUrl ?? `https://YOUR-PUBLIC-HOST/slack/events/${encodeURIComponent(front.name)}`,
  };
}

/** The script: prints the manifest and returns the exit code (the same codes as every script). */
export function manifestMain(
  argv: readonly string[],
  io: { out: (text: string) => void; err: (text: string) => void; cwd?: string; env?: Env } = {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  },
): number {
  try {
    const flags = parseFlags(argv, { switches: ['--json', '--help'], values: ['--request-url'], positionals: 1 });
    if (flags.switches.has('--help')) {
      io.out(`${MANIFEST_USAGE}\n`);
      return EXIT.ok;
    }
    const name = flags.positionals[0];
    if (!name) throw new UsageError('which agent? Name one');
    const cwd = io.cwd ?? process.cwd();
    const settings = readSettings(environmentWithDotenv(cwd, io.env ?? process.env));
    const agentsDir = path.resolve(cwd, settings.AGENTS_DIR);
    const agent = manifestAgent(agentsDir, name, flags.values.get('--request-url'));
    const manifest = buildManifest(agent);
    // On stderr: the manifest on stdout stays clean for a pipe or a file.
    const warning = unmarkedControlWarning(agentsDir, agent.name);
    if (warning) io.err(warning);
    io.out(flags.switches.has('--json') ? `${JSON.stringify(manifest, null, 2)}\n` : stringify(manifest));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`slack:manifest: ${error.message}\n${MANIFEST_USAGE}\n`);
      return EXIT.usage;
    }
    io.err(`slack:manifest failed: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = manifestMain(process.argv.slice(2));
}
