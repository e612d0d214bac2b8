/**
 * After a restart: what the room and the model are told about a turn that had already run tools (rule 12).
 */
import { oneLine } from './text/quoting.js';

/** A tool call a turn made before the crash, as the journal kept it. */
export interface ToolRunRecord {
  readonly tool: string;
  /** The shell command, or the arguments (null when the call never ended). */
  readonly input: string | null;
  readonly status: 'started' | 'ok' | 'refused' | 'failed';
}

/** A call as the room and the model read it: a command in backticks, another tool with its arguments; never empty. */
const shown = (run: ToolRunRecord) => {
  const input = oneLine(run.input ?? '');
  const short = input.length > 60 ? `${input.slice(0, 57)}...` : input;
  if (run.tool === 'bash' && short) return `\`${short}\``;
  return `${run.tool}${short ? ` ${short}` : ''}`;
};

/** The room's line when a turn cut by a restart had already run tools. */
export function interruptedLine(agent: string, runs: readonly ToolRunRecord[]): string {
  const cut = runs.filter((run) => run.status === 'started');
  const list = runs.slice(0, 5).map(shown).join(', ') + (runs.length > 5 ? `, and ${runs.length - 5} more` : '');
  return (
    `@${agent}'s turn was cut by a restart after ${runs.length} tool call${runs.length === 1 ? '' : 's'} (${list})` +
    (cut.length > 0 ? `; ${cut.map(shown).join(', ')} may have run only in part` : '') +
    '. It continues now, and nothing that already ran is run again.'
  );
}

/** What the model reads when its turn is taken again after a restart. */
export function resumeNote(runs: readonly ToolRunRecord[]): string {
  const head = 'Your previous attempt at this turn was cut by a restart before you replied.';
  if (runs.length === 0) return head;
  return [
    `${head} These tool calls had already been made; calling one again with the same arguments returns the`,
    'recorded result without running it again:',
    ...runs.map(
      (run) => `- ${shown(run)}${run.status === 'started' ? ' (cut while running: it may have run in part)' : ''}`,
    ),
  ].join('\n');
}

/** The room's line when a turn was cut by restarts too often to try again. */
export function tooOftenCutLine(agent: string, times: number): string {
  return `@${agent}'s turn was cut by ${times} restarts and is not tried again. Mention @${agent} to ask again.`;
}
