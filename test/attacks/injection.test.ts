/**
 * Prompt injection through every input kind (test/attacks/cases, `kind: injection`): the context is built as the
 * bridge builds it (turnContext, then the tool loop with the real tools for a call in the turn), and of the last
 * request the model is sent: every block is well formed and ends only at its own id, the injected text is inside a
 * block and nowhere outside, the room's people's words are outside, and no chat-template control token is left.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgentTurn } from '../../src/llm/agent-turn.js';
import { prepareBatch } from '../../src/llm/batch-call.js';
import type { ChatCompletionMessageParam, LlmClient, LlmResponse } from '../../src/llm/client.js';
import { stripControlTokens } from '../../src/llm/control-tokens.js';
import { turnContext } from '../../src/llm/turn-context.js';
import type { RoomMessage } from '../../src/room/types.js';
import { toolsFor } from '../../src/tools/registry.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { testConfig } from '../helpers/config.js';
import { readMarked, STRAY_TAG } from '../helpers/untrusted.js';
import { type InjectionCase, loadCorpus } from './corpus.js';

const workspaces = mkdtempSync(path.join(tmpdir(), 'attacks-'));
afterAll(() => rmSync(workspaces, { recursive: true, force: true }));

function history(conversation: InjectionCase['conversation']): RoomMessage[] {
  return conversation.map((m, index) => ({
    id: index + 1,
    author: m.author,
    authorId: m.authorId ?? m.author,
    kind: m.kind,
    content: m.text,
    mentions: [],
    toolRuns: m.toolRuns,
    ...(m.files ? { files: m.files } : {}),
    at: (index + 1) * 1000,
  }));
}

/** A model that makes the case's tool call once, then answers; it keeps the last request it was sent. */
function scriptedModel(call: InjectionCase['turn']): LlmClient & { last: ChatCompletionMessageParam[] } {
  const model = {
    last: [] as ChatCompletionMessageParam[],
    async complete(request: { messages: ChatCompletionMessageParam[] }): Promise<LlmResponse> {
      model.last = request.messages.map((m) => ({ ...m }));
      const first = !request.messages.some((m) => m.role === 'tool');
      if (!call || !first) return { content: 'done', toolCalls: [] };
      const [name, args] =
        'bash' in call ? ['bash', { command: call.bash.command }] : ['read_files', { files: [call.read_files.path] }];
      return { content: '', toolCalls: [{ id: 'call_1', name, arguments: JSON.stringify(args) }] };
    },
  };
  return model;
}

/** The last request the model is sent in a turn of `code` over the case's room. */
async function shownToModel(attack: InjectionCase, file: string): Promise<ChatCompletionMessageParam[]> {
  const config = testConfig({
    agents: [{ name: 'code', tools: ['bash', 'read_files'] }, { name: 'data' }],
    env: attack.env,
  });
  const agent = config.agents[0];
  if (!agent) throw new Error('no agent');
  const room = `${attack.platform}:${file}`;
  const sandbox = new FakeSandbox(
    (_key, command) =>
      attack.turn && 'bash' in attack.turn && command === attack.turn.bash.command
        ? { output: attack.turn.bash.output }
        : { output: '', exitCode: 127 },
    { workspaces },
  );
  if (attack.turn && 'read_files' in attack.turn) {
    const dir = (await sandbox.ensureWorkspace?.(room)) ?? '';
    const target = path.join(dir, attack.turn.read_files.path);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, attack.turn.read_files.content);
  }
  const tools = toolsFor(agent.tools);
  const model = scriptedModel(attack.turn);
  await runAgentTurn({
    client: model,
    model: agent.model,
    ...(await turnContext({
      agent,
      agentNames: config.agents.map((a) => a.name),
      place: { room, audience: null },
      roomId: 1,
      history: history(attack.conversation),
      situation: '@alice asked you to act now.',
      tools,
      settings: config.settings,
    })),
    tools,
    toolContext: {
      agent: agent.name,
      channelKey: room,
      sandbox,
      commandTimeoutMs: 10_000,
      signal: new AbortController().signal,
    },
    maxRounds: 3,
  });
  return model.last;
}

const corpus = loadCorpus();
const injections = corpus.flatMap((c) => (c.case.kind === 'injection' ? [{ file: c.file, attack: c.case }] : []));

describe('the attack corpus', () => {
  it('has at least 20 injection cases, through every input kind', () => {
    expect(injections.length).toBeGreaterThanOrEqual(20);
    const kinds = new Set(injections.map((c) => c.attack.via));
    expect([...kinds].sort()).toEqual(['bash', 'bot', 'file', 'name', 'nonce-guess', 'quote', 'tool-close', 'upload']);
  });
});

/** The room's transcript as a batched call (BATCHING=on) shows it to `code` and `data` at once. */
async function batchedTranscript(attack: InjectionCase, file: string): Promise<string> {
  const config = testConfig({ agents: [{ name: 'code' }, { name: 'data' }], env: attack.env });
  const prepared = await prepareBatch({
    members: config.agents.map((agent) => ({ agent, situation: '@alice asked you to act now.' })),
    agentNames: config.agents.map((a) => a.name),
    history: history(attack.conversation),
    place: { room: `${attack.platform}:${file}`, audience: null },
    roomId: 1,
    settings: config.settings,
  });
  return prepared.transcript;
}

describe('prompt injection: what the model is shown', () => {
  for (const { file, attack } of injections) {
    it(`${file}: ${attack.name}`, async () => {
      const messages = await shownToModel(attack, file);
      // Alone (the turn's whole request) and, for the room's history, in a batched call's transcript.
      const texts = messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')));
      if (!attack.turn) texts.push(await batchedTranscript(attack, file));
      const read = texts.map((text, index) => {
        try {
          return readMarked(text);
        } catch (error) {
          throw new Error(`message ${index} (${messages[index]?.role}): ${(error as Error).message}\n${text}`);
        }
      });
      const outside = read.map((r) => r.outside).join('\n');
      const inside = read.flatMap((r) => r.blocks.map((b) => b.body)).join('\n');
      for (const text of texts) expect(stripControlTokens(text), 'a control token is left').toBe(text);
      // Outside the blocks no tag is left but the bridge's own (the rules, first, show the format).
      for (const r of read.slice(1)) expect(r.outside, 'a tag outside the blocks').not.toMatch(STRAY_TAG);
      for (const injected of attack.expect.inside) {
        expect(inside, 'the injected text is shown inside a block').toContain(injected);
        expect(outside, 'the injected text is not shown outside a block').not.toContain(injected);
      }
      for (const said of attack.expect.outside) expect(outside, "a person's words stay outside").toContain(said);
      for (const gone of attack.expect.absent) expect(texts.join('\n')).not.toContain(gone);
    });
  }
});
