/**
 * `npm run slack:manifest -- <agent> [--json] [--request-url https://host/slack/events/<agent>]`
 * prints the Slack app manifest for one agent file. It reads the agent files only (no
 * tokens needed: the manifest comes before the app and its tokens exist).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { parseAgentFile } from '../../src/config/agent-file.js';
import { environmentWithDotenv, readSettings } from '../../src/config/index.js';
import { ConfigError, describeError } from '../../src/errors.js';
import { buildManifest, type ManifestAgent } from './manifest.js';

/** Finds `name` among the agent files in `agentsDir` and says how its Slack app is set up. */
export function manifestAgent(agentsDir: string, name: string, requestUrl?: string): ManifestAgent {
  const files = readdirSync(agentsDir)
    .filter((file) => file.endsWith('.md') && !file.startsWith('.') && file.toLowerCase() !== 'readme.md')
    .sort();
  const fronts = files.map(
    (file) => parseAgentFile(path.join(agentsDir, file), readFileSync(path.join(agentsDir, file), 'utf8')).front,
  );
  const front = fronts.find((f) => f.name.toLowerCase() === name.toLowerCase());
  if (!front) {
    throw new ConfigError(
      agentsDir,
      undefined,
      `no agent named "${name}" (agents: ${fronts.map((f) => f.name).join(', ')})`,
    );
  }
  // Same rule as the adapter: the agent marked control, else the first agent with Slack keys.
  const onSlack = fronts.filter((f) => f.slack);
  const control = onSlack.find((f) => f.slack?.control ?? f.control) ?? onSlack[0] ?? front;
  const socketMode = !front.slack || Boolean(front.slack.app_token_env) || !front.slack.signing_secret_env;
  return {
    name: front.name,
    control: control === front,
    socketMode,
    requestUrl: requestUrl ?? `https://YOUR-PUBLIC-HOST/slack/events/${encodeURIComponent(front.name)}`,
  };
}

function main(argv: readonly string[]): void {
  const args = [...argv];
  const json = args.includes('--json');
  const urlAt = args.indexOf('--request-url');
  const requestUrl = urlAt >= 0 ? args[urlAt + 1] : undefined;
  const name = args.find((arg, i) => !arg.startsWith('--') && (urlAt < 0 || i !== urlAt + 1));
  if (!name) {
    process.stderr.write('usage: npm run slack:manifest -- <agent> [--json] [--request-url URL]\n');
    process.exitCode = 2;
    return;
  }
  const settings = readSettings(environmentWithDotenv(process.cwd()));
  const agent = manifestAgent(path.resolve(settings.AGENTS_DIR), name, requestUrl);
  const manifest = buildManifest(agent);
  process.stdout.write(json ? `${JSON.stringify(manifest, null, 2)}\n` : stringify(manifest));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${describeError(error)}\n`);
    process.exitCode = 1;
  }
}
