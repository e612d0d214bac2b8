/**
 * Whole conversations through the fake Discord and the fake model, traced into an in-memory exporter: one trace per
 * human message, its root opened when the message arrives, the decision with who was asked and who was not, each
 * turn by the GenAI conventions, tool runs and posts below their turn, and requests between agents linked back to
 * the message that started them.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import { agentOf, situationOf } from '../helpers/harness.js';
import { attr, recordSpansInFile, traceOf } from './spans.js';

let h: DiscordHarness | undefined;
const spans = recordSpansInFile(async () => {
  await h?.close();
  h = undefined;
});

const WAIT = { timeout: 30_000, interval: 20 };
const LONG = 60_000;

/** The root span of the one human message whose platform id is `id`. */
function rootOf(id: string): ReadableSpan {
  const roots = spans.named('message').filter((s) => attr(s, 'messaging.message.id') === id);
  expect(roots).toHaveLength(1);
  const [root] = roots;
  if (!root) throw new Error('no root');
  expect(root.parentSpanContext).toBeUndefined();
  return root;
}

const turns = (agent?: string) =>
  spans.named(/^chat /).filter((s) => agent === undefined || attr(s, 'roundtable.agent') === agent);

describe('a traced conversation', () => {
  it(
    'puts a question answered by two agents, with a request between them, in one trace with links',
    async () => {
      h = await startDiscordHarness({
        agents: [
          { name: 'pm', activation: 'mention' },
          { name: 'lead', activation: 'mention' },
        ],
      });
      h.llm.respond((r) => {
        if (agentOf(r) === 'lead') return { content: '@pm Plot: Europa, warm water.' };
        if (/request #\d+ has answered/.test(situationOf(r))) return { content: 'The plan is set.' };
        return { content: '@lead please draft a plot.' };
      });
      const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> plan episode 4`);
      await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 3);
      await h.settle(asked.id);
      await vi.waitFor(() => expect(spans.named('post')).toHaveLength(3), WAIT);

      const root = rootOf(asked.id);
      expect(root.attributes).toMatchObject({ 'roundtable.platform': 'discord', 'roundtable.author': 'Alice' });
      // Every turn, decision and post of the exchange is in the message's trace.
      expect(turns().map((t) => [attr(t, 'roundtable.agent'), traceOf(t)])).toEqual([
        ['pm', traceOf(root)],
        ['lead', traceOf(root)],
        ['pm', traceOf(root)],
      ]);
      // The decision on the message: who was asked in which role, who was not and why, read from the routing record.
      const decision = spans.named('decide').find((s) => s.parentSpanContext?.spanId === root.spanContext().spanId);
      expect(decision?.attributes).toMatchObject({
        'roundtable.event': 'message',
        'roundtable.asked': ['pm:addressed'],
        'roundtable.skipped': ['lead:activation'],
      });
      const commit = spans.named('store commit').find((s) => spans.parentOf(s) === decision);
      expect(attr(commit, 'roundtable.result')).toBe('done');
      // The turns by the GenAI conventions.
      const [first, lead, resumed] = turns();
      expect(first?.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'pm',
        'server.address': '127.0.0.1',
        'roundtable.outcome': 'reply',
        'roundtable.reason': 'addressed',
      });
      expect(Number(attr(first, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
      expect(Number(attr(first, 'gen_ai.usage.output_tokens'))).toBeGreaterThan(0);
      // The request's turn and the requester's resume link back to the message that started them.
      expect(lead?.links.map((l) => [l.context.spanId, l.attributes?.['roundtable.link']])).toEqual([
        [root.spanContext().spanId, 'request'],
      ]);
      expect(resumed?.links.map((l) => [l.context.traceId, l.attributes?.['roundtable.link']])).toEqual([
        [traceOf(root), 'resume'],
      ]);
      // Each reply's post hangs below its turn.
      const posts = spans.named('post');
      expect(posts.map((p) => spans.parentOf(p)?.name)).toEqual(['chat pm', 'chat lead', 'chat pm']);
      expect(posts.map((p) => attr(p, 'roundtable.outcome'))).toEqual(['posted', 'posted', 'posted']);
      // No content by default.
      const everything = JSON.stringify(spans.spans().map((s) => [s.attributes, s.events.map((e) => e.attributes)]));
      expect(everything).not.toContain('plan episode');
      expect(everything).not.toContain('Europa');
    },
    LONG,
  );

  it(
    'says which agent passed, and the next one answered',
    async () => {
      h = await startDiscordHarness({
        agents: [
          { name: 'quiet', activation: 'always' },
          { name: 'chatty', activation: 'always' },
        ],
      });
      h.llm.respond((r) => ({ content: agentOf(r) === 'quiet' ? '[pass]' : 'Hello there.' }));
      const asked = h.discord.humanSays('general', 'alice', 'anyone around?');
      await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 1);
      await h.settle(asked.id);
      await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), WAIT);
      const root = rootOf(asked.id);
      // (quiet is asked again as an observer of chatty's reply, and passes again.)
      expect(
        turns()
          .slice(0, 2)
          .map((t) => [attr(t, 'roundtable.agent'), attr(t, 'roundtable.outcome'), traceOf(t)]),
      ).toEqual([
        ['quiet', 'pass', traceOf(root)],
        ['chatty', 'reply', traceOf(root)],
      ]);
      const passed = spans
        .named('decide')
        .find((s) =>
          s.events.some((e) => e.name === 'roundtable.passed' && e.attributes?.['roundtable.agent'] === 'quiet'),
        );
      expect(passed && traceOf(passed)).toBe(traceOf(root));
    },
    LONG,
  );

  it(
    'shows the turn limit handing the room back, in the trace of the message that started the run',
    async () => {
      h = await startDiscordHarness({
        agents: [
          { name: 'ping', activation: 'always' },
          { name: 'pong', activation: 'always' },
        ],
        env: { TURN_LIMIT: '2' },
      });
      let n = 0;
      h.llm.respond(() => ({ content: `Point number ${++n}.` }));
      const asked = h.discord.humanSays('general', 'alice', 'argue it out');
      await h.discord.until(() =>
        (h?.discord.messages('general') ?? []).some((m) => /agent messages in a row/.test(m.content)),
      );
      await h.settle(asked.id);
      const root = rootOf(asked.id);
      await vi.waitFor(() => {
        const handBack = spans.named('decide').find((s) => attr(s, 'roundtable.hand_back') === 'turn limit');
        expect(handBack && traceOf(handBack)).toBe(traceOf(root));
      }, WAIT);
    },
    LONG,
  );

  it(
    'marks a turn a spending limit refused as a failure, with the limit',
    async () => {
      h = await startDiscordHarness({
        agents: [
          {
            name: 'costly',
            activation: 'mention',
            price: { input: 1000, cached: 1000, output: 1000 },
            spendLimitUsdDay: 0.0001,
          },
        ],
      });
      h.llm.respond(() => ({ content: 'Expensive words.' }));
      const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('costly-bot').id}> write an essay`);
      await h.settle(asked.id);
      const root = rootOf(asked.id);
      await vi.waitFor(() => expect(turns('costly')).toHaveLength(1), WAIT);
      const [turn] = turns('costly');
      expect(turn?.attributes).toMatchObject({
        'roundtable.outcome': 'failure',
        'roundtable.refusal': 'spending limit',
        'roundtable.limit.scope': 'agent',
      });
      expect(turn?.status.code).toBe(SpanStatusCode.ERROR);
      expect(turn && traceOf(turn)).toBe(traceOf(root));
      expect(h.llm.requests).toHaveLength(0);
    },
    LONG,
  );

  it(
    'counts a failed post tried again, with the wait before the next try',
    async () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'rt-trace-log-')), 'bridge.log');
      h = await startDiscordHarness({
        agents: [{ name: 'pm', activation: 'mention' }],
        backoff: () => 30,
        logger: createLogger({ level: 'debug', file, format: 'json' }),
      });
      h.llm.respond(() => ({ content: 'Posted in the end.' }));
      // discord.js tries a request 4 times on a 5xx: 4 failures make one failed post, which the bridge tries again.
      h.discord.failRequests({ method: 'POST', path: '/messages', count: 4, status: 503 });
      const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> say it`);
      await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 1);
      await h.settle(asked.id);
      await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), WAIT);
      const [post] = spans.named('post');
      expect(post?.attributes).toMatchObject({
        'roundtable.platform': 'discord',
        'roundtable.retries': 1,
        'roundtable.outcome': 'posted',
      });
      expect(Number(attr(post, 'roundtable.retry_wait_ms'))).toBeGreaterThanOrEqual(30);
      expect(post?.events.filter((e) => e.name === 'roundtable.retry')).toHaveLength(1);
      expect(post && traceOf(post)).toBe(traceOf(rootOf(asked.id)));
      // The failed try's log line leads to the post's span.
      const failed = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { msg: string; trace_id?: string; span_id?: string })
        .find((line) => line.msg.startsWith('posting failed'));
      expect(failed).toMatchObject({ trace_id: post && traceOf(post), span_id: post?.spanContext().spanId });
    },
    LONG,
  );

  it(
    'gives an operator command its own trace',
    async () => {
      h = await startDiscordHarness({ agents: [{ name: 'pm', activation: 'mention' }], operators: ['alice'] });
      await h.discord.slash('pm-bot', 'alice', 'general', 'status');
      await vi.waitFor(() => expect(spans.named('command /status')).toHaveLength(1), WAIT);
      const [command] = spans.named('command /status');
      expect(command?.parentSpanContext).toBeUndefined();
      const decision = spans.named('decide').find((s) => s.parentSpanContext?.spanId === command?.spanContext().spanId);
      expect(attr(decision, 'roundtable.event')).toBe('command');
    },
    LONG,
  );

  it(
    'writes the trace id of the work into the log lines of that work',
    async () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'rt-trace-log-')), 'bridge.log');
      h = await startDiscordHarness({
        agents: [{ name: 'pm', activation: 'mention' }],
        logger: createLogger({ level: 'debug', file, format: 'json' }),
      });
      h.llm.respond(() => ({ content: 'Logged.' }));
      const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> log this`);
      await h.discord.until(() => (h?.discord.botMessages('general').length ?? 0) === 1);
      await h.settle(asked.id);
      const root = rootOf(asked.id);
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { msg: string; trace_id?: string; span_id?: string });
      const call = lines.find((line) => line.msg === 'llm call');
      expect(call?.trace_id).toBe(traceOf(root));
      expect(turns().map((t) => t.spanContext().spanId)).toContain(call?.span_id);
    },
    LONG,
  );
});
