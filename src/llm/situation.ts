/**
 * The words of the situation frame the room picks for a turn (src/room/situation.ts; the model does not choose).
 * Agents may override observe, requested and direct with `prompts:` in their file; `{requester}`, `{thread}` and
 * `{user}` are filled in. People's names are shown as in the transcript (`speakerName`): one line, nothing invisible.
 */
import type { Situation } from '../room/effects.js';
import { oneLine, speakerName } from '../room/text/quoting.js';

export interface SituationOverrides {
  readonly observe?: string | undefined;
  readonly requested?: string | undefined;
  readonly direct?: string | undefined;
}

const DEFAULTS = {
  observe:
    'A new message arrived in the room and you were not asked directly. Reply only if you have something useful ' +
    'to add; otherwise reply with exactly [pass].',
  requested:
    '{requester} asked for your action{thread}. Do what was asked and answer {requester} in your reply. ' +
    'If you have nothing to contribute, reply with exactly [pass].',
  direct: 'This is a private conversation between you and {user}; nobody else sees it. Answer them directly.',
} as const;

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

const names = (list: readonly string[]) => {
  const tagged = list.map((n) => `@${speakerName(n)}`);
  return tagged.length <= 1 ? (tagged[0] ?? '') : `${tagged.slice(0, -1).join(', ')} and ${tagged.at(-1)}`;
};

export function renderSituation(situation: Situation, overrides: SituationOverrides = {}): string {
  switch (situation.kind) {
    case 'observe':
      return overrides.observe ?? DEFAULTS.observe;
    case 'requested': {
      const ids = situation.threads.map((id) => `#${id}`);
      return fill(overrides.requested ?? DEFAULTS.requested, {
        requester: names(situation.requesters),
        thread: ids.length === 0 ? '' : ` (request ${ids.join(', ')})`,
      });
    }
    case 'answered':
      return (
        `@${speakerName(situation.by)} answered the question you asked them (the newest message). Continue from their answer; ` +
        'if nothing is left to do, reply with exactly [pass].'
      );
    case 'direct':
      return fill(overrides.direct ?? DEFAULTS.direct, { user: `@${speakerName(situation.user)}` });
    case 'resume':
      return situation.summary;
    case 'chat-request':
      return [
        `@${situation.from} asks you for a private chat (request #${situation.id}): ${oneLine(situation.reason)}`,
        `Accept or decline with chat_response(request_id: ${situation.id}, accept). Nobody else sees this turn.`,
        `If you accept, your reply is your first private message to @${situation.from}; if you decline, your reply is not shown to anyone.`,
      ].join('\n');
  }
}
