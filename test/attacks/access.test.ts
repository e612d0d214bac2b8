/**
 * The attack corpus's access cases (kind `access`, cases/access-*.yaml), each played through a whole bridge on the
 * Discord or Slack fake: an outsider's words reach no model and run nothing, every refusal is shown to the person
 * refused, a stranger's DMs stay out of every room until an operator pairs them, and pairing holds against guessing,
 * reuse, the wrong approver and look-alike text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Line, type Stage, startStage } from './access-stages.js';
import { type AccessCase, loadCorpus } from './corpus.js';

const cases = loadCorpus().flatMap((c) => (c.case.kind === 'access' ? [{ file: c.file, attack: c.case }] : []));

let stage: Stage | undefined;
afterEach(async () => {
  await stage?.close();
  stage = undefined;
});

/** The lines shown, matched one to one with the lines expected (any order); what is left over on either side. */
function unmatched(shown: readonly Line[], expected: AccessCase['expect']['lines']) {
  const left = [...shown];
  const missing = expected.filter((want) => {
    const at = left.findIndex((l) => l.in === want.in && l.to === want.to && l.text.includes(want.says));
    if (at < 0) return true;
    left.splice(at, 1);
    return false;
  });
  return { missing, extra: left };
}

async function play(attack: AccessCase, s: Stage): Promise<void> {
  for (const [i, step] of attack.steps.entries()) {
    const before = s.calls().length;
    let calls = 0;
    if ('say' in step) {
      calls = step.say.calls;
      await s.say(step.say);
    } else if ('edit' in step) {
      calls = step.edit.calls;
      await s.edit(step.edit.of, step.edit.text);
    } else if ('dm' in step) {
      calls = step.dm.calls;
      await s.dm(step.dm.who, step.dm.to, step.dm.text);
    } else if ('slash' in step) {
      const answer = await s.slash(step.slash.who, step.slash.in, step.slash.command, step.slash.args);
      expect(answer, `step ${i + 1}: the answer to /${step.slash.command}`).toContain(step.slash.answer);
    } else if ('later' in step) {
      s.later(step.later.minutes);
    } else if ('down' in step) {
      await s.down();
    } else {
      calls = step.up.calls;
      await s.up();
    }
    if (calls > 0) {
      const deadline = Date.now() + 30_000;
      while (s.calls().length < before + calls && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    }
    await s.idle();
    expect(s.calls().length - before, `step ${i + 1} (${JSON.stringify(step)}): model calls`).toBe(calls);
  }
}

describe('the attack corpus: access', () => {
  it('holds at least 12 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  it.each(cases.map((c) => [c.file, c.attack] as const))(
    '%s',
    async (_, attack) => {
      stage = await startStage(attack);
      const s = stage;
      await play(attack, s);
      // Every refusal visible: wait for the lines expected, then nothing else may have been shown.
      const deadline = Date.now() + 30_000;
      while (unmatched(s.lines(), attack.expect.lines).missing.length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      await s.idle();
      expect(unmatched(s.lines(), attack.expect.lines)).toEqual({ missing: [], extra: [] });
      expect(s.commands(), 'commands run in a sandbox').toBe(0);
      expect(await s.dmsStored(), 'a DM stored').toBe(attack.expect.dms_stored);
    },
    120_000,
  );
});
