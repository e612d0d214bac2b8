/**
 * Slack sends an event again only when it was not acknowledged. The bridge acknowledges a message once its store
 * commit is done, so a bridge that stops (or dies) before the commit, or a store that cannot write, loses nothing:
 * Slack's next try brings the message, and the store's unique key answers it once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import type { FakeApp } from '../fakes/slack/index.js';
import { CommitGate } from '../helpers/commit-gate.js';
import { roomMessagesOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { type SlackHarness, type SlackHarnessAgent, startSlackHarness } from '../slack/slack-harness.js';

let h: SlackHarness | undefined;
let gated: CommitGate | undefined;
afterEach(async () => {
  // A test that failed with a commit at the gate: let it through, so the bridge can stop.
  gated?.open();
  await h?.close();
  h = undefined;
  gated = undefined;
});

const newest = (request: RecordedRequest) =>
  String(roomMessagesOf(request).at(-1)?.content ?? '').replace(/^\[@[^\]]+\]: /, '');

/** A harness whose store commits pass `gate`, with @code answering every message `re: <text>`. */
async function start(gate: CommitGate, options: { http?: boolean; env?: Record<string, string> } = {}) {
  gated = gate;
  const code: SlackHarnessAgent = { name: 'code', activation: 'always', ...(options.http ? { http: true } : {}) };
  const harness = await startSlackHarness({
    agents: [code],
    wrapStore: (store) => gate.wrap(store),
    // The store is tried again quickly: the tests wait for the gate, not for the bridge's long waits.
    backoff: () => 20,
    ...(options.env ? { env: options.env } : {}),
  });
  harness.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
  return harness;
}

/** The envelope that brought the message `ts` to @code's app (the first, unless `retry`). */
function envelopeOf(s: SlackHarness, ts: string, retry = 0): string {
  const found = s.slack.deliveries.filter((d) => {
    const payload = d.envelope.payload as { event?: { ts?: string } } | undefined;
    return d.app === 'code' && d.type === 'events_api' && payload?.event?.ts === ts;
  })[retry];
  if (!found) throw new Error(`no delivery ${retry} of ${ts}`);
  return found.envelopeId;
}

const ackOf = (s: SlackHarness, envelopeId: string) => s.slack.acks.find((a) => a.envelopeId === envelopeId);

const answers = (s: SlackHarness, text: string) =>
  s.slack.posts(s.general).filter((m) => m.text === `re: ${text}`).length;

async function humans(s: SlackHarness, thread: string): Promise<string[]> {
  const stored = await history(s.store, 'slack', `${s.general.id}/${thread}`);
  return stored.filter((m) => m.kind === 'human').map((m) => m.content);
}

describe('Slack acknowledges a message only once the bridge has stored it', () => {
  it('over Socket Mode: no ack while its commit is slow, the ack once it is done', async () => {
    const gate = new CommitGate('a question whose commit is slow');
    h = await start(gate);
    const s = h;
    gate.hold();
    const message = s.slack.say(s.alice, s.general, 'a question whose commit is slow');
    await s.slack.waitFor(() => gate.held === 1, 10_000, 'the commit at the gate');
    const envelope = envelopeOf(s, message.ts);
    // An envelope sent later on the same connection is acknowledged at once: once its ack is in, an ack of the
    // message sent before it would be in too.
    const later = s.slack.blockAction(s.apps.code as FakeApp, { user: s.alice, channel: s.general, actionId: 'later' });
    await s.slack.waitFor(() => ackOf(s, later), 10_000, 'the later envelope acknowledged');
    expect(ackOf(s, envelope)).toBeUndefined();

    const released = performance.now();
    gate.open();
    const ack = await s.slack.waitFor(() => ackOf(s, envelope), 10_000, 'the ack after the commit');
    expect(ack.at).toBeGreaterThanOrEqual(released);
    await s.slack.waitFor(() => answers(s, 'a question whose commit is slow') === 1, 10_000, 'the answer');
  });

  it('over HTTP: the response waits for the commit, and is a 200 once it is done', async () => {
    const gate = new CommitGate('a question over HTTP whose commit is slow');
    h = await start(gate, { http: true });
    const s = h;
    gate.hold();
    const message = s.slack.say(s.alice, s.general, 'a question over HTTP whose commit is slow');
    await s.slack.waitFor(() => gate.held === 1, 10_000, 'the commit at the gate');
    const envelope = envelopeOf(s, message.ts);
    expect(s.slack.httpResults.filter((r) => r.envelopeId === envelope)).toEqual([]);

    const released = performance.now();
    gate.open();
    const ack = await s.slack.waitFor(() => ackOf(s, envelope), 10_000, 'the response after the commit');
    expect(ack.at).toBeGreaterThanOrEqual(released);
    expect(s.slack.httpResults.filter((r) => r.envelopeId === envelope).map((r) => r.status)).toEqual([200]);
    await s.slack.waitFor(() => answers(s, 'a question over HTTP whose commit is slow') === 1, 10_000, 'the answer');
  });

  it('stopped before the commit: unacknowledged, and Slack’s next try to the restarted bridge is answered once', async () => {
    const gate = new CommitGate('asked just before the stop');
    // No catch-up after the restart: Slack's next try is the only way the message comes back.
    h = await start(gate, { env: { CATCHUP_MAX: '0' } });
    const s = h;
    gate.hold();
    const message = s.slack.say(s.alice, s.general, 'asked just before the stop');
    await s.slack.waitFor(() => gate.held === 1, 10_000, 'the commit at the gate');
    const stopping = s.bridge.stop();
    await s.slack.waitFor(() => !s.slack.isConnected('code'), 10_000, 'the app disconnected');
    // The stopped bridge never commits it, as a killed one would not.
    gate.drop();
    await stopping;
    expect(ackOf(s, envelopeOf(s, message.ts))).toBeUndefined();
    expect(await humans(s, message.ts)).toEqual([]);

    await s.up();
    s.slack.redeliver(envelopeOf(s, message.ts), { attempt: 1, reason: 'timeout' });
    const retried = envelopeOf(s, message.ts, 1);
    await s.slack.waitFor(() => ackOf(s, retried), 10_000, 'the next try acknowledged');
    await s.slack.waitFor(() => answers(s, 'asked just before the stop') === 1, 10_000, 'the answer');
    await s.bridge.idle();
    expect(await humans(s, message.ts)).toEqual(['asked just before the stop']);
    expect(answers(s, 'asked just before the stop')).toBe(1);
    expect(s.llm.requests.map(newest)).toEqual(['asked just before the stop']);
  });

  it('while the store cannot write: held in memory unacknowledged, stored when it can, Slack’s next try answered once', async () => {
    const gate = new CommitGate('said while the store cannot write');
    h = await start(gate);
    const s = h;
    gate.refuse();
    const message = s.slack.say(s.alice, s.general, 'said while the store cannot write');
    await s.slack.waitFor(() => gate.arrived >= 2, 10_000, 'the store tried again');
    gate.open();
    await s.slack.waitFor(() => answers(s, 'said while the store cannot write') === 1, 10_000, 'the answer');
    await s.bridge.idle();
    // Held, it was never acknowledged: had the bridge died meanwhile, Slack's next try would have brought it back.
    expect(ackOf(s, envelopeOf(s, message.ts))).toBeUndefined();

    s.slack.redeliver(envelopeOf(s, message.ts), { attempt: 1, reason: 'timeout' });
    await s.slack.waitFor(() => ackOf(s, envelopeOf(s, message.ts, 1)), 10_000, 'the next try acknowledged');
    await s.bridge.idle();
    expect(await humans(s, message.ts)).toEqual(['said while the store cannot write']);
    expect(answers(s, 'said while the store cannot write')).toBe(1);
  });
});
