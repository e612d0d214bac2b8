/**
 * MCP servers through the whole bridge and the REAL Docker sandbox: the fake Discord, the fake model, and
 * `createDockerSandbox` running the reference servers (server-filesystem, server-everything) inside each room's
 * container. A room's server reads that room's workspace and no other, runs in the container and not on the host;
 * `/pass` cancels a slow call on the wire; a server killed inside its container is started again with one line.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpServerConfig } from '../../src/config/mcp-servers.js';
import type { ProcessSpec, Sandbox, SandboxProcess } from '../../src/ports.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { readMarked } from '../helpers/untrusted.js';
import {
  DOCKER_TEST_TIMEOUT,
  dockerUp,
  imageHasMcpServers,
  runDockerTests,
  SandboxHarness,
  sandboxImage,
} from '../sandbox/docker-harness.js';
import { isCi } from '../sandbox/docker-setup.js';

const T = { timeoutMs: 30_000 };
const WAIT = { timeout: 60_000, interval: 100 };
const fs: McpServerConfig = {
  kind: 'stdio',
  name: 'fs',
  command: 'mcp-server-filesystem',
  args: ['/workspace'],
  env: {},
  run: 'sandbox',
};
const everything: McpServerConfig = {
  kind: 'stdio',
  name: 'everything',
  command: 'mcp-server-everything',
  args: ['stdio'],
  env: {},
  run: 'sandbox',
};

const servers = runDockerTests && dockerUp && (await imageHasMcpServers(sandboxImage).catch(() => false));
const required = isCi(process.env.CI);
if (runDockerTests && !servers && !required) {
  console.warn(`MCP scenario tests skipped: ${sandboxImage} carries no Node MCP servers (CI=true makes them required)`);
}

/** A server process the bridge started in a room's container, with what the bridge wrote to its stdin. */
interface Spawned {
  readonly room: string;
  readonly spec: ProcessSpec;
  readonly written: string[];
  exit: number | null | undefined;
}

let h: DiscordHarness | undefined;
let docker: SandboxHarness | undefined;
afterEach(async () => {
  await h?.close();
  await docker?.cleanup();
  h = undefined;
  docker = undefined;
});

/** The real Docker sandbox, its `spawn` watched (the process is the sandbox's own; only its stdin is copied). */
function watchedSandbox(env: Record<string, string> = {}): { sandbox: Sandbox; spawned: Spawned[] } {
  docker = new SandboxHarness();
  const sandbox = docker.create(env);
  const spawn = sandbox.spawn?.bind(sandbox);
  if (!spawn) throw new Error('the Docker sandbox has no spawn');
  const spawned: Spawned[] = [];
  sandbox.spawn = async (room: string, spec: ProcessSpec): Promise<SandboxProcess> => {
    const child = await spawn(room, spec);
    const entry: Spawned = { room, spec, written: [], exit: undefined };
    spawned.push(entry);
    child.onExit((code) => {
      entry.exit = code;
    });
    const write = child.write.bind(child);
    child.write = (chunk) => {
      entry.written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      write(chunk);
    };
    return child;
  };
  return { sandbox, spawned };
}

async function start(sandbox: Sandbox, mcp: McpServerConfig[], env: Record<string, string> = {}) {
  h = await startDiscordHarness({
    sandbox,
    env: { SANDBOX_TIMEOUT_S: '300', ...env },
    agents: [
      { name: 'data', activation: 'mention', control: true },
      { name: 'code', activation: 'mention', mcp },
    ],
    operators: ['otto'],
    humans: [{ name: 'alice', nick: 'Alice' }, { name: 'otto' }],
  });
  return h;
}

/** The model: the call asked for first, then the tool's result (its untrusted block's body, or the whole text). */
function answerWith(harness: DiscordHarness, call: (request: RecordedRequest) => { name: string; arguments: object }) {
  harness.llm.respond((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') {
      const text = String(last.content);
      const body = readMarked(text).blocks[0]?.body ?? text;
      return { content: `tool said: ${body.replace(/\s+/g, ' ').trim()}` };
    }
    const made = call(request);
    return { toolCalls: [{ name: made.name, arguments: made.arguments as Record<string, unknown> }] };
  });
}

const room = (harness: DiscordHarness, channel: string) => `discord:${harness.discord.channel(channel).id}`;
const texts = (harness: DiscordHarness, channel: string) =>
  harness.discord.botMessages(channel).map((message) => message.content);

/** Waits (bounded) until the room's bot messages pass `check`; a failure shows them. */
async function posted(harness: DiscordHarness, channel: string, check: (texts: string[]) => boolean): Promise<void> {
  await vi.waitFor(() => {
    const seen = texts(harness, channel);
    if (!check(seen)) throw new Error(`not yet in #${channel}: ${JSON.stringify(seen)}`);
  }, WAIT);
}

/** `ps` inside a room's container: its processes' command lines. */
async function containerProcesses(harness: SandboxHarness, key: string): Promise<string[]> {
  const [info] = await harness.containers(key);
  if (!info) throw new Error(`no container for ${key}`);
  const top = await harness.docker.getContainer(info.Id).top({ ps_args: '-eo pid,args' });
  const column = top.Titles.findIndex((title: string) => /CMD|COMMAND|ARGS/i.test(title));
  return top.Processes.map((row: string[]) => row[column] ?? '');
}

/** Host processes in the bridge's own pid namespace whose command line names `name` (none: nothing on the host). */
function hostProcesses(name: string): string[] {
  const mine = readlinkSync('/proc/self/ns/pid');
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (args.includes(name) && readlinkSync(`/proc/${pid}/ns/pid`) === mine) found.push(`${pid} ${args}`);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return found;
}

/** Runs a shell line in a room's container (docker exec, as the sandbox's user: root has no CAP_KILL there); its output. */
async function execIn(harness: SandboxHarness, key: string, command: string): Promise<string> {
  const [info] = await harness.containers(key);
  if (!info) throw new Error(`no container for ${key}`);
  const exec = await harness.docker
    .getContainer(info.Id)
    .exec({ Cmd: ['sh', '-c', command], AttachStdout: true, AttachStderr: true, User: 'sandbox' });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    stream.on('end', () => resolve());
    stream.on('error', reject);
  });
  return Buffer.concat(chunks).toString('utf8');
}

describe.skipIf(!runDockerTests || (!servers && !required))(
  'MCP servers through the bridge and the real Docker sandbox',
  { timeout: DOCKER_TEST_TIMEOUT * 2 },
  () => {
    it('has the servers in the image', () => {
      expect(
        servers,
        `${sandboxImage} carries no Node MCP servers: npm run sandbox:build with SANDBOX_MCP_PACKAGES`,
      ).toBe(true);
    });

    it("a room's server reads that room's workspace only, inside the room's container, nothing on the host", async () => {
      const { sandbox, spawned } = watchedSandbox();
      const harness = await start(sandbox, [fs]);
      const general = room(harness, 'general');
      const dev = room(harness, 'dev');
      await sandbox.exec(general, 'echo "launch codes: 0000 (general only)" > plan.txt', T);
      await sandbox.exec(dev, 'echo "dev has its own files" > other.txt', T);
      answerWith(harness, () => ({ name: 'fs__read_text_file', arguments: { path: '/workspace/plan.txt' } }));
      const code = harness.discord.bot('code-bot').id;

      const asked = harness.discord.humanSays('general', 'alice', `<@${code}> read plan.txt`);
      await posted(harness, 'general', (seen) => seen.some((t) => t.startsWith('tool said')));
      await harness.settle(asked.id);
      expect(texts(harness, 'general').at(-1)).toBe('tool said: launch codes: 0000 (general only)');
      // The server's own tool list, as the model was offered it.
      const offered = ((harness.llm.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>).map(
        (t) => t.function.name,
      );
      expect(offered).toEqual(expect.arrayContaining(['fs__read_text_file', 'fs__list_directory']));

      const again = harness.discord.humanSays('dev', 'alice', `<@${code}> read plan.txt`);
      await posted(harness, 'dev', (seen) => seen.some((t) => t.startsWith('tool said')));
      await harness.settle(again.id);
      const answer = texts(harness, 'dev').at(-1) ?? '';
      expect(answer).toMatch(/ENOENT|no such file|not found/i);
      expect(answer).not.toContain('launch codes');

      // One server per room, each started in its own room's container.
      expect(spawned.map((s) => s.room).sort()).toEqual([general, dev].sort());
      for (const key of [general, dev]) {
        const inside = await containerProcesses(docker as SandboxHarness, key);
        expect(inside.filter((args) => args.includes('mcp-server-filesystem'))).toHaveLength(1);
      }
      expect(hostProcesses('mcp-server-filesystem')).toEqual([]);
    });

    it('/pass during a slow call cancels it on the wire; the turn ends long before the tool would, and says nothing', async () => {
      const { sandbox, spawned } = watchedSandbox();
      const harness = await start(sandbox, [everything]);
      answerWith(harness, () => ({
        name: 'everything__trigger-long-running-operation',
        arguments: { duration: 120, steps: 120 },
      }));
      const code = harness.discord.bot('code-bot').id;
      const asked = harness.discord.humanSays('general', 'alice', `<@${code}> run the long thing`);
      const wire = () => spawned.flatMap((s) => s.written).join('');
      await vi.waitFor(() => expect(wire()).toMatch(/"method":"tools\/call"/), WAIT);
      const before = texts(harness, 'general').length;
      const passed = performance.now();
      await harness.discord.slash('data-bot', 'otto', 'general', 'pass');
      await vi.waitFor(() => expect(wire()).toMatch(/"method":"notifications\/cancelled"/), WAIT);
      await harness.settle(asked.id);
      const took = performance.now() - passed;
      expect(took).toBeLessThan(60_000);
      const cancelled = wire()
        .split('\n')
        .filter((line) => line.includes('notifications/cancelled'))
        .map((line) => JSON.parse(line) as { params: { requestId: number } });
      const call = wire()
        .split('\n')
        .filter((line) => line.includes('"method":"tools/call"'))
        .map((line) => JSON.parse(line) as { id: number });
      expect(cancelled.map((c) => c.params.requestId)).toEqual(call.map((c) => c.id));
      // Nothing more from the agent in the room: no answer was posted after /pass.
      expect(
        texts(harness, 'general')
          .slice(before)
          .some((t) => t.startsWith('tool said')),
      ).toBe(false);
      expect(harness.llm.requests).toHaveLength(1);
      // The server lives on, in its container, and answers the next call.
      expect(spawned).toHaveLength(1);
      expect(spawned[0]?.exit).toBeUndefined();
      answerWith(harness, () => ({ name: 'everything__echo', arguments: { message: 'still here' } }));
      const next = harness.discord.humanSays('general', 'alice', `<@${code}> echo`);
      await posted(harness, 'general', (seen) => seen.some((t) => t.startsWith('tool said')));
      await harness.settle(next.id);
      expect(texts(harness, 'general').at(-1)).toBe('tool said: Echo: still here');
      expect(spawned).toHaveLength(1);
    });

    it('a server killed inside its container is started again, with one line in the room', async () => {
      const { sandbox, spawned } = watchedSandbox();
      const harness = await start(sandbox, [fs]);
      const general = room(harness, 'general');
      await sandbox.exec(general, 'echo "first" > a.txt', T);
      answerWith(harness, () => ({ name: 'fs__read_text_file', arguments: { path: '/workspace/a.txt' } }));
      const code = harness.discord.bot('code-bot').id;
      const first = harness.discord.humanSays('general', 'alice', `<@${code}> read a.txt`);
      await posted(harness, 'general', (seen) => seen.some((t) => t.startsWith('tool said')));
      await harness.settle(first.id);
      expect(spawned).toHaveLength(1);

      // SIGTERM from a second exec, as an operator (or the OOM killer) would end it.
      await execIn(
        docker as SandboxHarness,
        general,
        `kill $(ps -eo pid,args | awk '/[m]cp-server-filesystem/ {print $1}')`,
      );
      const stopped = 'MCP server fs stopped; starting it again in 1s.';
      await posted(harness, 'general', (seen) => seen.includes(stopped));
      await vi.waitFor(() => expect(spawned[0]?.exit).toEqual(expect.any(Number)), WAIT);

      // Asked at once: the tool is still offered; within the backoff the call says the server is down, after it
      // the server is started again for the call.
      await sandbox.exec(general, 'echo "second" > a.txt', T);
      const meanwhile = harness.discord.humanSays('general', 'alice', `<@${code}> read a.txt now`);
      await posted(harness, 'general', (seen) => seen.length === 3);
      await harness.settle(meanwhile.id);
      expect(texts(harness, 'general')[2]).toMatch(
        /^tool said: (second|\[ERROR: the MCP server fs is down \(it stopped\); next try in \ds\])$/,
      );
      await vi.waitFor(() => expect(spawned).toHaveLength(2), WAIT);
      const second = harness.discord.humanSays('general', 'alice', `<@${code}> read a.txt again`);
      await posted(harness, 'general', (seen) => seen.length === 4);
      await harness.settle(second.id);
      expect(texts(harness, 'general')[3]).toBe('tool said: second');
      expect(texts(harness, 'general').filter((t) => t === stopped)).toHaveLength(1);
      expect(spawned).toHaveLength(2);
      const inside = await containerProcesses(docker as SandboxHarness, general);
      expect(inside.filter((args) => args.includes('mcp-server-filesystem'))).toHaveLength(1);
    });
  },
);
