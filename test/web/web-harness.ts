/**
 * A bridge with the web room on 127.0.0.1 (a free port), the fake model server, a fake sandbox whose workspaces are
 * folders (uploads land there), and a store in a temporary folder; people are invited as `npm run web:invite` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebAdapter } from '../../adapters/web/index.js';
import { inviteLink } from '../../adapters/web/invite-cli.js';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import type { Config } from '../../src/config/index.js';
import { type Logger, silentLogger } from '../../src/log.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from '../helpers/config.js';

export interface WebHarness {
  readonly llm: FakeOpenAI;
  readonly config: Config;
  readonly store: SqliteStore;
  readonly sandbox: FakeSandbox;
  readonly web: WebAdapter;
  readonly bridge: Bridge;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Where the sandbox keeps each room's workspace. */
  readonly workspaces: string;
  /** A one-time sign-in link, as `npm run web:invite -- <name> [--operator]` prints it (for `base`, default url). */
  invite(name: string, options?: { operator?: boolean; base?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startWebHarness(
  options: {
    agents?: TestAgent[];
    env?: Record<string, string>;
    logger?: Logger;
    beatMs?: number;
    /** The web room's clock (sessions, links, uploads); the bridge keeps the real one. */
    clock?: () => number;
  } = {},
): Promise<WebHarness> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-web-'));
  const llm = await startFakeOpenAI();
  const config = testConfig({
    agents: options.agents ?? [{ name: 'code' }, { name: 'data' }, { name: 'reviewer' }],
    env: {
      OPENAI_BASE_URL: llm.baseURL,
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '20',
      WEB_PORT: '0',
      WEB_ROOMS: 'general,ops-room',
      ...options.env,
    },
  });
  const logger = options.logger ?? silentLogger();
  const store = openStore(path.join(dir, 'roundtable.db'));
  const workspaces = path.join(dir, 'workspaces');
  const sandbox = new FakeSandbox(() => ({ output: 'ok', exitCode: 0 }), { workspaces });
  const web = new WebAdapter({
    config,
    logger,
    people: store.people,
    ...(options.beatMs !== undefined ? { beatMs: options.beatMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const bridge = createBridge({ config, store, sandbox, adapters: [web], logger });
  await bridge.start();
  const url = `http://127.0.0.1:${web.port}`;
  return {
    llm,
    config,
    store,
    sandbox,
    web,
    bridge,
    url,
    workspaces,
    invite: (name, invite = {}) =>
      inviteLink(
        store.people,
        { name, operator: invite.operator ?? false },
        invite.base ?? url,
        (options.clock ?? Date.now)(),
      ),
    async close() {
      await bridge.stop();
      await store.close();
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Signs in over HTTP (GET the link, POST its form from the same origin); the session cookie (`name=value`). */
export async function signIn(link: string): Promise<string> {
  const origin = new URL(link).origin;
  const page = await fetch(link);
  if (!page.ok) throw new Error(`the sign-in page answered ${page.status}`);
  const answer = await fetch(link, { method: 'POST', headers: { origin }, redirect: 'manual' });
  const cookie = answer.headers.get('set-cookie');
  if (answer.status !== 303 || !cookie) throw new Error(`signing in answered ${answer.status}`);
  return cookie.split(';')[0] ?? '';
}
