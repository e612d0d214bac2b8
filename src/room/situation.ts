/**
 * Why a turn is asked, as its prompt frames it (the router decides; the model does not choose). The shell renders
 * the frame into words (src/llm/situation.ts) and nothing else.
 */
import type { Situation } from './effects.js';
import { resumeSummary } from './requests.js';
import type { RoomSetup, Turn } from './state.js';

/**
 * The frame of a turn for `ask` in a room of this kind; `requesters`: who asked for it (humans, and the requesters
 * of the requests it answers). A DM's turn always speaks to its human (2.2.1); an agent that waited for one human's
 * answer is told it came (2.2.2).
 */
export function situationOf(ask: Turn, requesters: readonly string[], kind: RoomSetup['kind']): Situation {
  const user = ask.questions[0]?.human ?? ask.author;
  switch (ask.reason) {
    case 'direct':
      return { kind: 'direct', user };
    case 'always':
    case 'mentioned':
      return { kind: 'observe' };
    case 'resume':
      return ask.resume ? { kind: 'resume', summary: resumeSummary(ask.resume) } : { kind: 'observe' };
    case 'chat-request':
      return ask.chat
        ? { kind: 'chat-request', from: ask.chat.from, reason: ask.chat.reason, id: ask.chat.id }
        : { kind: 'observe' };
    case 'awaiting':
      if (ask.requests.length === 0 && ask.questions.length === 1) return { kind: 'answered', by: user };
      break;
  }
  if (kind === 'direct') return { kind: 'direct', user };
  return { kind: 'requested', requesters, threads: ask.requests };
}
