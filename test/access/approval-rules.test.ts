/** Which tool calls wait for approval (src/access/approval-rules.ts): modes, bash patterns, and the floor. */
import { describe, expect, it } from 'vitest';
import { approvalRules, floorOf, globMatches, modeFor } from '../../src/access/approval-rules.js';

describe('approval rules', () => {
  const rules = approvalRules('agents/code.md', {
    approvals: { bash: 'ask', send_dm: 'deny' },
    bash_allow: ['ls*', 'git status'],
    bash_deny: ['curl *'],
  });

  it('asks, allows and denies by the agent file', () => {
    expect(modeFor(rules, 'bash', 'make test').mode).toBe('ask');
    expect(modeFor(rules, 'bash', 'ls -la').mode).toBe('off');
    expect(modeFor(rules, 'bash', ' git status ').mode).toBe('off');
    expect(modeFor(rules, 'bash', 'git status; rm -rf build').mode).toBe('ask');
    expect(modeFor(rules, 'bash', 'curl http://x').mode).toBe('deny');
    expect(modeFor(rules, 'send_dm', '{}')).toEqual({
      mode: 'deny',
      why: 'send_dm is not allowed for this agent (approvals: deny)',
    });
    expect(modeFor(rules, 'write_files', '{}').mode).toBe('off');
    expect(modeFor(undefined, 'bash', 'make').mode).toBe('off');
  });

  it('matches whole commands with * and ?, nothing else special', () => {
    expect(globMatches('git diff*', 'git diff --stat')).toBe(true);
    expect(globMatches('git diff*', 'xgit diff')).toBe(false);
    expect(globMatches('ls ?', 'ls a')).toBe(true);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('echo (x)', 'echo (x)')).toBe(true);
  });

  it('refuses what wipes the workspace or the machine in every mode, however written', () => {
    for (const command of [
      'rm -rf /workspace',
      'rm -fr /',
      'rm -r -f ~',
      'rm --recursive --force /workspace/',
      'cd /tmp && rm -rf *',
      'rm -rf .',
      'sudo rm -Rf /*',
      'find / -name x -delete',
      'mkfs.ext4 /dev/sda1',
      'dd if=/dev/zero of=/dev/sda',
      ':(){ :|:& };:',
    ]) {
      expect(floorOf(command), command).toBeDefined();
      expect(modeFor(undefined, 'bash', command).mode, command).toBe('deny');
      expect(modeFor(rules, 'bash', command).mode, command).toBe('deny');
    }
    for (const command of ['rm -rf build', 'rm -rf ./build', 'rm file', 'dd if=a of=/dev/null', 'ls /']) {
      expect(floorOf(command), command).toBeUndefined();
    }
  });

  it('names the file and field of an action that is no tool', () => {
    expect(() => approvalRules('agents/code.md', { approvals: { bsh: 'ask' } })).toThrow(
      /agents\/code\.md: approvals\.bsh: is not a tool/,
    );
  });

  it('holds model calls over spend_threshold_usd (ask by default), and names the file when the threshold is missing', () => {
    expect(approvalRules('agents/code.md', { spend_threshold_usd: 0.05 }).spendOver).toEqual({
      nano: 50_000_000,
      mode: 'ask',
    });
    expect(
      approvalRules('agents/code.md', { spend_threshold_usd: 0.05, approvals: { spend_usd_per_call: 'deny' } })
        .spendOver,
    ).toEqual({ nano: 50_000_000, mode: 'deny' });
    expect(
      approvalRules('agents/code.md', { spend_threshold_usd: 0.05, approvals: { spend_usd_per_call: 'off' } })
        .spendOver,
    ).toBeUndefined();
    expect(() => approvalRules('agents/code.md', { approvals: { spend_usd_per_call: 'ask' } })).toThrow(
      /agents\/code\.md: approvals\.spend_usd_per_call: needs spend_threshold_usd/,
    );
  });
});
