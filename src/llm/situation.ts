/**
 * The situation frames the router picks for a turn (the model does not choose): appended to the
 * agent's system prompt. Agents may override the first three with `prompts:` in their file;
 * `{requester}`, `{thread}` and `{user}` are filled in.
 */

export type Situation =
  /** A room message the agent may answer without being asked. */
  | { readonly kind: 'observe' }
  /** A message that asks for its action: from a human mention, or a request_reply thread. */
  | { readonly kind: 'requested'; readonly requester: string; readonly thread?: number | undefined }
  /** A private conversation with one human. */
  | { readonly kind: 'direct'; readonly user: string }
  /** Its own request is complete (or expired): the answers follow. */
  | { readonly kind: 'resume'; readonly summary: string };

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

export function renderSituation(situation: Situation, overrides: SituationOverrides = {}): string {
  switch (situation.kind) {
    case 'observe':
      return overrides.observe ?? DEFAULTS.observe;
    case 'requested':
      return fill(overrides.requested ?? DEFAULTS.requested, {
        requester: `@${situation.requester}`,
        thread: situation.thread !== undefined ? ` (request #${situation.thread})` : '',
      });
    case 'direct':
      return fill(overrides.direct ?? DEFAULTS.direct, { user: `@${situation.user}` });
    case 'resume':
      return situation.summary;
  }
}
