/** What /status shows about a channel's sandbox; pure, so the wording is easy to test. */
export interface SandboxState {
  /** running: a command is executing; idle: up, waiting for one; stopped: recreated on the next command. */
  readonly container: 'running' | 'idle' | 'stopped' | 'absent';
  readonly startedAt: number | undefined;
  readonly lastCommand: { readonly text: string; readonly at: number } | undefined;
  readonly now: number;
}

const COMMAND_PREVIEW = 60;

/** One line, e.g. `sandbox: idle, up 12m, last command 3m ago: python3 report.py`. */
export function describeState(state: SandboxState): string {
  const parts = [`sandbox: ${state.container === 'absent' ? 'absent (created on the next command)' : state.container}`];
  if (state.container === 'stopped') parts[0] += ' (recreated on the next command)';
  if (state.startedAt !== undefined && Number.isFinite(state.startedAt)) {
    parts.push(`up ${formatDuration(state.now - state.startedAt)}`);
  }
  if (state.lastCommand) {
    const oneLine = state.lastCommand.text.replace(/\s+/g, ' ').trim();
    const preview = oneLine.length > COMMAND_PREVIEW ? `${oneLine.slice(0, COMMAND_PREVIEW - 1)}…` : oneLine;
    parts.push(`last command ${formatDuration(state.now - state.lastCommand.at)} ago: ${preview}`);
  } else {
    parts.push('no command since the bridge started');
  }
  return parts.join(', ');
}

/** 42s, 5m, 3h 20m, 2d 4h: coarse on purpose, it is for people. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${minutes % 60 ? ` ${minutes % 60}m` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days}d${hours % 24 ? ` ${hours % 24}h` : ''}`;
}
