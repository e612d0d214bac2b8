import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { environmentWithDotenv, loadConfig, templateDir } from '../../src/config/index.js';
import { configErrorOf } from '../helpers/config.js';

let dir: string;
const write = (name: string, text: string) => writeFileSync(path.join(dir, 'agents', name), text);
const agent = (front: string, body = 'You are helpful.') => `---\n${front}\n---\n${body}\n`;
const load = (env: Record<string, string> = {}) => loadConfig(env, dir);

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-config-'));
  mkdirSync(path.join(dir, 'agents'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('agent files', () => {
  it('reads front matter and body, sorted by file name, with defaults', () => {
    write('b.md', agent('name: beta\nmodel: m2\nactivation: always\ntools: [bash]\ntemperature: 0.5'));
    write('a.md', agent('name: alpha\nmodel: m1', 'Alpha prompt.'));
    const config = load({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: 'sk-test' });
    expect(config.agents.map((a) => a.name)).toEqual(['alpha', 'beta']);
    const [alpha, beta] = config.agents;
    expect(alpha).toMatchObject({
      model: 'm1',
      activation: 'mention',
      tools: [],
      systemPrompt: 'Alpha prompt.',
      endpoint: 'http://127.0.0.1:1/v1',
      apiKey: 'sk-test',
    });
    expect(beta).toMatchObject({ activation: 'always', tools: ['bash'], temperature: 0.5 });
    expect(config.settings.TURN_LIMIT).toBe(20);
    expect(config.secrets).toContain('sk-test');
  });

  it('uses endpoint and api_key_env from the file', () => {
    write('a.md', agent('name: alpha\nmodel: m\nendpoint: http://127.0.0.1:11434/v1\napi_key_env: ALPHA_KEY'));
    const config = load({ ALPHA_KEY: 'k-alpha-123' });
    expect(config.agents[0]).toMatchObject({ endpoint: 'http://127.0.0.1:11434/v1', apiKey: 'k-alpha-123' });
  });

  it('starts without any API key (local endpoints need none)', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(load().agents[0]?.apiKey).toBeUndefined();
  });

  it('names the file and field of an invalid value', () => {
    write('a.md', agent('name: alpha\nmodel: m\nactivation: sometimes'));
    const error = configErrorOf(load);
    expect(error.message).toMatch(/agents\/a\.md: activation: /);
    expect(error.file).toBe(path.join('./agents', 'a.md'));
    expect(error.field).toBe('activation');
  });

  it('rejects a name with spaces, saying exactly what is allowed', () => {
    write('a.md', agent('name: my agent\nmodel: m'));
    expect(configErrorOf(load).message).toBe(
      `${path.join('./agents', 'a.md')}: name: use only letters (any script), digits, "_" and "-": no spaces, dots or "@"`,
    );
  });

  it('accepts names in any script', () => {
    write('a.md', agent('name: José\nmodel: m'));
    write('b.md', agent('name: 数据_2\nmodel: m'));
    expect(load().agents.map((a) => a.name)).toEqual(['José', '数据_2']);
  });

  it('gives the line in the agent file of a YAML error', () => {
    // Line 1 is the opening ---: the second `model` is the fourth line of the file.
    write('a.md', agent('name: alpha\nmodel: m\nmodel: n\nactivation: always'));
    const error = configErrorOf(load);
    expect(error.message).toBe(
      `${path.join('./agents', 'a.md')}:4: front matter is not valid YAML: Map keys must be unique`,
    );
    expect(error.line).toBe(4);
  });

  it('rejects unknown keys by name', () => {
    write('a.md', agent('name: alpha\nmodel: m\nactivaton: always'));
    expect(configErrorOf(load).message).toMatch(/a\.md: activaton: unknown key/);
  });

  it('rejects duplicate agent names, case-insensitively', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    write('b.md', agent('name: Alpha\nmodel: m'));
    expect(configErrorOf(load).message).toMatch(/b\.md: name: "Alpha" is already used by .*a\.md/);
  });

  it('rejects an unknown tool', () => {
    write('a.md', agent('name: alpha\nmodel: m\ntools: [bash, teleport]'));
    expect(configErrorOf(load).message).toMatch(/a\.md: tools\.1: unknown tool "teleport"/);
  });

  it('rejects an api_key_env naming an unset variable', () => {
    write('a.md', agent('name: alpha\nmodel: m\napi_key_env: MISSING_KEY'));
    expect(configErrorOf(load).message).toMatch(/a\.md: api_key_env: names MISSING_KEY, which is not set/);
  });

  it('rejects a file without front matter and one with an empty prompt', () => {
    write('a.md', 'just text');
    expect(configErrorOf(load).message).toMatch(/a\.md: must start with YAML front matter/);
    write('a.md', agent('name: alpha\nmodel: m', ''));
    expect(configErrorOf(load).message).toMatch(/a\.md: body: the system prompt/);
  });

  it('reads platform blocks and their tokens from the environment', () => {
    write('a.md', agent('name: alpha\nmodel: m\ndiscord: { token_env: ALPHA_DISCORD }\ncontrol: true'));
    const config = load({ ALPHA_DISCORD: 'discord-token-value' });
    expect(config.agents[0]?.discord).toEqual({ token: 'discord-token-value', control: true });
    expect(config.secrets).toContain('discord-token-value');
  });

  it('counts credentials inside URLs among the secrets', () => {
    write('a.md', agent('name: alpha\nmodel: m\nendpoint: http://proxy:agent-pw-1@127.0.0.1:9/v1?api-key=agent-key-2'));
    const config = load({
      OPENAI_BASE_URL: 'http://127.0.0.1:8/v1?key=base-key-3&api-version=2024',
      DISCORD_API_URL: 'http://discord-api-token-4@127.0.0.1:7/api',
      SLACK_API_URL: 'http://127.0.0.1:6/api/?token=slack-token-5',
    });
    expect(config.secrets).toEqual(['base-key-3', 'discord-api-token-4', 'slack-token-5', 'agent-pw-1', 'agent-key-2']);
  });

  it("counts DATABASE_URL's password among the secrets, and refuses a URL that is not Postgres's without showing it", () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    const config = load({ DATABASE_URL: 'postgres://rt:db-password-6@db.internal:5432/roundtable' });
    expect(config.settings.DATABASE_URL).toBe('postgres://rt:db-password-6@db.internal:5432/roundtable');
    expect(config.secrets).toContain('db-password-6');
    // A role without a password (.pgpass, trust) is no secret: "postgres" must not be blanked in every line.
    const role = load({ DATABASE_URL: 'postgresql://postgres@db/roundtable?sslmode=require' });
    expect(role.settings.DATABASE_URL).toBe('postgresql://postgres@db/roundtable?sslmode=require');
    expect(role.secrets).toEqual([]);
    expect(configErrorOf(() => load({ DATABASE_URL: 'mysql://rt:db-password-7@db/roundtable' })).message).toBe(
      'environment: DATABASE_URL: expected a URL that starts with postgres:// or postgresql:// (got "mysql://[redacted]@db/roundtable")',
    );
  });

  it('refuses bind workspaces on a remote Docker engine, with or without a shared Postgres store, in one line', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    const shared = { DATABASE_URL: 'postgres://rt@db/roundtable', DOCKER_HOST: 'tcp://docker.internal:2376' };
    const refusal =
      "environment: SANDBOX_WORKSPACES: bind cannot work with DOCKER_HOST=tcp://docker.internal:2376: a remote engine cannot mount this machine's DATA_DIR; set SANDBOX_WORKSPACES=volume";
    expect(configErrorOf(() => load(shared)).message).toBe(refusal);
    expect(configErrorOf(() => load({ DOCKER_HOST: 'tcp://docker.internal:2376' })).message).toBe(refusal);
    expect(load({ ...shared, SANDBOX_WORKSPACES: 'volume' }).settings.SANDBOX_WORKSPACES).toBe('volume');
    // The local engine: bind workspaces are where the bridge is.
    expect(load({ ...shared, DOCKER_HOST: 'unix:///var/run/docker.sock' }).settings.DOCKER_HOST).toBe(
      'unix:///var/run/docker.sock',
    );
  });

  it('shows a bad URL setting without its credentials', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ OPENAI_BASE_URL: 'http://u:pw-in-url@host:99999/v1' })).message).toBe(
      'environment: OPENAI_BASE_URL: Invalid URL (got "http://[redacted]@host:99999/v1")',
    );
  });

  it('refuses a model endpoint without http:// or https://, saying what was meant', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ OPENAI_BASE_URL: 'localhost:11434/v1' })).message).toBe(
      'environment: OPENAI_BASE_URL: expected a URL that starts with http:// or https://: did you mean http://localhost:11434/v1? (got "localhost:11434/v1")',
    );
    expect(configErrorOf(() => load({ OPENAI_BASE_URL: 'api.openai.com/v1' })).message).toMatch(
      /did you mean https:\/\/api\.openai\.com\/v1\?/,
    );
    expect(configErrorOf(() => load({ EMBEDDINGS_BASE_URL: '127.0.0.1:8080/v1' })).message).toMatch(
      /^environment: EMBEDDINGS_BASE_URL: .*did you mean http:\/\/127\.0\.0\.1:8080\/v1\?/,
    );
    expect(configErrorOf(() => load({ OPENAI_BASE_URL: 'ftp://host/v1' })).message).toMatch(
      /^environment: OPENAI_BASE_URL: expected an http:\/\/ or https:\/\/ URL/,
    );
  });

  it("refuses an agent file's endpoint without a scheme, naming the file and the key", () => {
    write('a.md', agent('name: alpha\nmodel: m\nendpoint: gpu-box:11434/v1'));
    expect(configErrorOf(load).message).toBe(
      `${path.join('agents', 'a.md')}: endpoint: expected a URL that starts with http:// or https://: did you mean http://gpu-box:11434/v1?`,
    );
  });

  it('refuses a model endpoint that ends in /chat/completions: the client adds that itself', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ OPENAI_BASE_URL: 'http://localhost:11434/v1/chat/completions' })).message).toBe(
      'environment: OPENAI_BASE_URL: the client adds /chat/completions itself: drop it (did you mean http://localhost:11434/v1?) (got "http://localhost:11434/v1/chat/completions")',
    );
    write('a.md', agent('name: alpha\nmodel: m\nendpoint: https://api.example.com/v1/chat/completions/'));
    expect(configErrorOf(load).message).toBe(
      `${path.join('agents', 'a.md')}: endpoint: the client adds /chat/completions itself: drop it (did you mean https://api.example.com/v1?)`,
    );
    // A query (Azure's api-version) stays with the base.
    expect(
      configErrorOf(() => load({ OPENAI_BASE_URL: 'https://x.example.com/openai/chat/completions?api-version=2024' }))
        .message,
    ).toMatch(/did you mean https:\/\/x\.example\.com\/openai\?api-version=2024\?/);
  });

  it('refuses timeouts too long for a timer', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ REPLY_TIMEOUT_S: '99999999' })).message).toMatch(
      /^environment: REPLY_TIMEOUT_S: /,
    );
    expect(load({ REPLY_TIMEOUT_S: '2147483' }).settings.REPLY_TIMEOUT_S).toBe(2147483);
  });

  it('names the environment variable of a bad global setting', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ TURN_LIMIT: 'lots' })).message).toMatch(/^environment: TURN_LIMIT: /);
  });

  it('checks the SANDBOX_* values at start-up, not at the first bash', () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ SANDBOX_MEMORY: '2' })).message).toBe(
      'environment: SANDBOX_MEMORY: expected a size of at least 6m such as 512m or 1g (got "2")',
    );
    expect(configErrorOf(() => load({ SANDBOX_NETWORK: 'no net' })).message).toMatch(/^environment: SANDBOX_NETWORK: /);
    expect(configErrorOf(() => load({ SANDBOX_IMAGE: 'UPPER/Case Image' })).message).toMatch(
      /^environment: SANDBOX_IMAGE: /,
    );
    expect(configErrorOf(() => load({ SANDBOX_CPUS: '0' })).message).toMatch(/^environment: SANDBOX_CPUS: /);
    const ok = load({ SANDBOX_IMAGE: 'registry.local:5000/team/sandbox:1.2', SANDBOX_NETWORK: 'agents-net' });
    expect(ok.settings.SANDBOX_IMAGE).toBe('registry.local:5000/team/sandbox:1.2');
  });

  it('checks SANDBOX_TEMPLATE_DIR exists, naming the variable and the folder', () => {
    expect(() => templateDir({ SANDBOX_TEMPLATE_DIR: './nowhere' }, dir)).toThrow(
      `environment: SANDBOX_TEMPLATE_DIR: folder ${path.join(dir, 'nowhere')} does not exist`,
    );
    expect(templateDir({ SANDBOX_TEMPLATE_DIR: './agents' }, dir)).toBe(path.join(dir, 'agents'));
    expect(templateDir({}, dir)).toBeUndefined();
  });

  it('says when the agents folder has no agent files', () => {
    expect(configErrorOf(load).message).toMatch(/no agent files/);
  });
});

describe('.env', () => {
  it('reads .env under the real environment, which wins', () => {
    writeFileSync(path.join(dir, '.env'), 'TURN_LIMIT=7\nLOG_LEVEL=debug\n');
    const env = environmentWithDotenv(dir, { LOG_LEVEL: 'warn' });
    expect(env.TURN_LIMIT).toBe('7');
    expect(env.LOG_LEVEL).toBe('warn');
  });
});

describe('budgets and prices in agent files', () => {
  it("defaults to MODEL_CONTEXT_TOKENS and seed 004's allocations", () => {
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(load({ MODEL_CONTEXT_TOKENS: '16000' }).agents[0]).toMatchObject({
      contextTokens: 16000,
      allocations: { knowledge: 30, recentActions: 10, rooms: 60 },
    });
    expect(load().agents[0]?.contextTokens).toBe(32768);
    expect(load().agents[0]?.price).toBeUndefined();
  });

  it('reads context_tokens, memory_allocations (rooms takes the rest) and price', () => {
    write(
      'a.md',
      agent(
        'name: alpha\nmodel: m\ncontext_tokens: 128000\nmemory_allocations: { knowledge: 40 }\nprice: { input: 0.15, output: 0.6 }',
      ),
    );
    expect(load().agents[0]).toMatchObject({
      contextTokens: 128000,
      allocations: { knowledge: 40, recentActions: 10, rooms: 50 },
      price: { input: 0.15, cached: 0.15, output: 0.6 },
    });
  });

  it('rejects allocations that do not add up to 100, and a budget smaller than the answer reserve', () => {
    write('a.md', agent('name: alpha\nmodel: m\nmemory_allocations: { knowledge: 30, recent_actions: 10, rooms: 70 }'));
    expect(configErrorOf(load).message).toMatch(
      /a\.md: memory_allocations: knowledge \+ recent_actions \+ rooms must add up to 100 \(got 110\)/,
    );
    write('a.md', agent('name: alpha\nmodel: m\nmemory_allocations: { knowledge: 60, recent_actions: 35 }'));
    expect(configErrorOf(load).message).toMatch(/memory_allocations\.rooms: must be at least 10/);
    write('a.md', agent('name: alpha\nmodel: m\ncontext_tokens: 4096'));
    expect(configErrorOf(load).message).toMatch(
      /a\.md: context_tokens: must be at least ANSWER_RESERVE_TOKENS \(4096\) \+ 1024/,
    );
    write('a.md', agent('name: alpha\nmodel: m'));
    expect(configErrorOf(() => load({ MODEL_CONTEXT_TOKENS: '2048', ANSWER_RESERVE_TOKENS: '2048' })).message).toMatch(
      /environment: MODEL_CONTEXT_TOKENS: must be at least ANSWER_RESERVE_TOKENS \(2048\) \+ 1024/,
    );
    write('a.md', agent('name: alpha\nmodel: m\nprice: { input: -1, output: 1 }'));
    expect(configErrorOf(load).message).toMatch(/a\.md: price\.input: /);
  });
});

describe('spending limits', () => {
  const priced = 'price: { input: 0.15, output: 0.6 }';

  it('reads the limits, the time zone, the output cap and the embeddings price', () => {
    write('a.md', agent(`name: alpha\nmodel: m\n${priced}\nspend_limit_usd_day: 2.5\nmax_output_tokens: 800`));
    write('b.md', agent(`name: beta\nmodel: m\n${priced}`));
    const config = load({
      SPEND_LIMIT_USD_DAY: '20',
      ROOM_SPEND_LIMIT_USD_DAY: '5',
      SPEND_TZ: 'Europe/Paris',
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
      EMBEDDINGS_PRICE: '0.02',
    });
    expect(config.settings).toMatchObject({
      SPEND_LIMIT_USD_DAY: 20,
      ROOM_SPEND_LIMIT_USD_DAY: 5,
      SPEND_TZ: 'Europe/Paris',
      EMBEDDINGS_PRICE: 0.02,
    });
    expect(config.agents[0]).toMatchObject({ spendLimitUsdDay: 2.5, maxOutputTokens: 800 });
    // Without max_output_tokens every call's cap is ANSWER_RESERVE_TOKENS.
    expect(config.agents[1]?.maxOutputTokens).toBe(4096);
    expect(config.settings.SPEND_TZ).toBe('Europe/Paris');
    expect(load().settings.SPEND_TZ).toBe('UTC');
  });

  it('refuses a limit that applies to an agent without a price, naming the agent and its file', () => {
    write('a.md', agent(`name: alpha\nmodel: m\n${priced}`));
    write('b.md', agent('name: beta\nmodel: m'));
    expect(configErrorOf(() => load({ SPEND_LIMIT_USD_DAY: '20' })).message).toMatch(
      /b\.md: price: SPEND_LIMIT_USD_DAY applies to @beta, so it needs a price/,
    );
    expect(configErrorOf(() => load({ ROOM_SPEND_LIMIT_USD_DAY: '5' })).message).toMatch(
      /b\.md: price: ROOM_SPEND_LIMIT_USD_DAY applies to @beta/,
    );
    write('b.md', agent('name: beta\nmodel: m\nspend_limit_usd_day: 1'));
    expect(configErrorOf(load).message).toMatch(/b\.md: price: spend_limit_usd_day needs a price/);
    // An agent's own limit needs only that agent's price.
    write('b.md', agent('name: beta\nmodel: m'));
    write('a.md', agent(`name: alpha\nmodel: m\n${priced}\nspend_limit_usd_day: 1`));
    expect(load().agents.map((a) => a.name)).toEqual(['alpha', 'beta']);
  });

  it('refuses embeddings without a price under a shared limit, and a time zone it does not know', () => {
    write('a.md', agent(`name: alpha\nmodel: m\n${priced}`));
    expect(configErrorOf(() => load({ SPEND_LIMIT_USD_DAY: '20', EMBEDDINGS_MODEL: 'e' })).message).toMatch(
      /environment: EMBEDDINGS_PRICE: SPEND_LIMIT_USD_DAY applies to embeddings too/,
    );
    expect(configErrorOf(() => load({ SPEND_TZ: 'Mars/Olympus' })).message).toMatch(
      /environment: SPEND_TZ: expected an IANA time zone/,
    );
    expect(configErrorOf(() => load({ SPEND_LIMIT_USD_DAY: '-3' })).message).toMatch(
      /environment: SPEND_LIMIT_USD_DAY/,
    );
  });
});
