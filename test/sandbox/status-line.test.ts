import { describe, expect, it } from 'vitest';
import { describeState, formatDuration } from '../../sandbox/status-line.js';

describe('sandbox status line', () => {
  it('says when there is no container yet', () => {
    expect(describeState({ container: 'absent', startedAt: undefined, lastCommand: undefined, now: 0 })).toBe(
      'sandbox: absent (created on the next command), no command since the bridge started',
    );
  });

  it('shows state, age and the last command on one line', () => {
    const line = describeState({
      container: 'idle',
      startedAt: 0,
      lastCommand: { text: 'python3 -c "print(1)"\n  && ls', at: 600_000 },
      now: 720_000,
    });
    expect(line).toBe('sandbox: idle, up 12m, last command 2m ago: python3 -c "print(1)" && ls');
  });

  it('shortens a long command', () => {
    const line = describeState({
      container: 'running',
      startedAt: 0,
      lastCommand: { text: 'x'.repeat(500), at: 0 },
      now: 0,
    });
    expect(line.length).toBeLessThan(120);
    expect(line).toContain('…');
  });

  it('formats durations coarsely', () => {
    expect(formatDuration(42_000)).toBe('42s');
    expect(formatDuration(3 * 3_600_000 + 20 * 60_000)).toBe('3h 20m');
    expect(formatDuration(2 * 86_400_000 + 4 * 3_600_000)).toBe('2d 4h');
    expect(formatDuration(-5)).toBe('0s');
  });
});
