import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { agentOf, situationOf } from '../helpers/harness.js';
import { requests } from '../helpers/store-views.js';

const resumed = (r: RecordedRequest, id: number) => situationOf(r).includes(`asked in request #${id} has answered`);

/** The design's writers' room, played by the fake model. `opinionOrder` is the order @pm names them in. */
function writersRoom(opinionOrder: [string, string]) {
  return (request: RecordedRequest) => {
    const agent = agentOf(request);
    if (agent === 'pm') {
      if (resumed(request, 3)) return { content: 'The episode is set: the revised plot goes to production.' };
      if (resumed(request, 2)) {
        return { content: '@lead_writer please revise the plot with both notes: keep the ice science, soften Mara.' };
      }
      if (resumed(request, 1))
        return { content: `@${opinionOrder[0]} @${opinionOrder[1]} what do you think of this plot?` };
      return { content: '@lead_writer please draft a plot for episode 4.' };
    }
    if (agent === 'lead_writer') {
      if (situationOf(request).includes('(request #3)'))
        return { content: '@pm Revised: Mara hesitates, then drills.' };
      return { content: '@pm Plot: a probe finds warm water under the Europa ice; Mara drills against orders.' };
    }
    if (agent === 'science') return { content: 'Warm water under the ice is plausible: tidal heating.' };
    if (agent === 'character_dev') return { content: 'Mara defying orders fits, but she should hesitate first.' };
    return { content: '[pass]' };
  };
}

let llm: FakeOpenAI;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => llm.close());

async function playWritersRoom(opinionOrder: [string, string]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-writers-'));
  mkdirSync(path.join(dir, 'agents'));
  const agents: Array<[string, string]> = [
    ['1-pm', 'name: pm\nactivation: always'],
    ['2-lead_writer', 'name: lead_writer\nactivation: mention'],
    ['3-science', 'name: science\nactivation: mention'],
    ['4-character_dev', 'name: character_dev\nactivation: mention'],
  ];
  for (const [file, front] of agents) {
    writeFileSync(
      path.join(dir, 'agents', `${file}.md`),
      `---\n${front}\nmodel: m\n---\nYou work in a writers' room.\n`,
    );
  }
  llm.requests.length = 0;
  llm.respond(writersRoom(opinionOrder));
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const running = await run({
    argv: [],
    cwd: dir,
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0' },
    stdin,
    stdout,
    sandbox: async () => new FakeSandbox(),
  });
  stdin.end('@pm let us plan episode 4\n');
  await running.console?.finished;
  const threads = await requests(running.store);
  await running.shutdown();
  rmSync(dir, { recursive: true, force: true });
  const speakers = [...printed.matchAll(/^\[@([a-z_]+)\]:/gm)].map((m) => m[1]);
  return { printed, speakers, threads, requests: [...llm.requests] };
}

describe("the writers' room (terminal room)", () => {
  for (const order of [
    ['science', 'character_dev'],
    ['character_dev', 'science'],
  ] as Array<[string, string]>) {
    it(`@pm waits for both opinions (${order.join(' first, then ')}) and resumes exactly once`, async () => {
      const { speakers, threads, requests } = await playWritersRoom(order);
      expect(speakers).toEqual(['user', 'pm', 'lead_writer', 'pm', ...order, 'pm', 'lead_writer', 'pm']);

      // @pm was asked exactly once after the two opinions, with both in its context.
      const afterOpinions = requests.filter((r) => agentOf(r) === 'pm' && resumed(r, 2));
      expect(afterOpinions).toHaveLength(1);
      expect(situationOf(afterOpinions[0] as RecordedRequest)).toMatch(
        /- @science: Warm water[\s\S]*- @character_dev: Mara|- @character_dev: Mara[\s\S]*- @science: Warm water/,
      );
      // Nobody else was woken by the answers (they mention @pm, which is an answer, not a request).
      expect(requests.map(agentOf)).toEqual(['pm', 'lead_writer', 'pm', ...order, 'pm', 'lead_writer', 'pm']);

      expect(
        threads.map((t) => ({
          id: t.id,
          requester: t.requester,
          status: t.status,
          awaited: t.awaited.map((p) => p.name),
          answered: t.answers.map((a) => a.participant),
        })),
      ).toEqual([
        { id: 1, requester: 'pm', status: 'closed', awaited: ['lead_writer'], answered: ['lead_writer'] },
        { id: 2, requester: 'pm', status: 'closed', awaited: order, answered: order },
        { id: 3, requester: 'pm', status: 'closed', awaited: ['lead_writer'], answered: ['lead_writer'] },
      ]);
    });
  }
});
