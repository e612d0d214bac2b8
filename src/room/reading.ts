/**
 * Rule 1: reading a message — whom it mentions and asks, who may see it — and recording it in the room's state
 * (its sequence number, the count, the humans seen, what each agent asked last).
 */
import { withAddressed } from './addressed.js';
import { type Draft, lower, same } from './draft.js';
import type { StoredMessage } from './effects.js';
import type { AuthorKind, ToolRun } from './events.js';
import { audienceOf } from './privacy.js';
import type { MessageFacts } from './state.js';
import { extractMentions } from './text/mentions.js';
import { asksQuestion, isNoProgress, normalised } from './text/replies.js';

/** How many humans the room remembers as mentionable, and how many recent agent messages it keeps. */
const HUMANS_KEPT = 50;
const AGENT_POSTS_KEPT = 64;

/** A message to record, before the rules have read it. */
export interface Writing {
  readonly author: string;
  readonly authorId: string;
  readonly kind: AuthorKind;
  readonly text: string;
  /** The bridge's lines about its uploaded files: stored with it, never read for mentions. */
  readonly files?: readonly string[] | undefined;
  readonly platformIds: readonly string[];
  readonly at: number;
  /** Agents the platform says a human's message addresses (a reply to an agent's message). */
  readonly addressed?: readonly string[] | undefined;
  /** Mentions decided by the caller (an edit addresses only the agents it adds). */
  readonly mentions?: readonly string[] | undefined;
  /** Agents that see it besides its mentions (the agents an action's request_reply awaits). */
  readonly seenBy?: readonly string[] | undefined;
  /** Whom it asks, when the caller decides (an action's post, a world pass: nobody). */
  readonly requests?: readonly string[] | undefined;
  /** The people its author's turn answers (naming them is the answer), and that exchange's audience. */
  readonly answering?: readonly string[] | undefined;
  readonly exchange?: readonly string[] | null | undefined;
  /** The outbox entry it was posted from, and the tool calls of the turn that wrote it. */
  readonly post?: number | undefined;
  readonly toolRuns?: readonly ToolRun[] | undefined;
  /** A human the access policy does not let in (rule 16): history only, so it resets nothing and is not remembered. */
  readonly outsider?: boolean | undefined;
}

/** Rule 1.2: whom an agent's message asks for a reply. */
export function requestsOf(input: {
  readonly agents: readonly string[];
  readonly humans: readonly string[];
  readonly author: string;
  readonly answering: readonly string[];
  readonly text: string;
}): string[] {
  const answered = (name: string) => input.answering.some((person) => same(person, name));
  const question = asksQuestion(input.text);
  return [
    ...input.agents.filter((name) => !same(name, input.author) && !answered(name)),
    ...input.humans.filter((name) => !same(name, input.author) && (!answered(name) || question)),
  ];
}

/** A recorded message as the rules read it, and whether it moves nothing forward (rule 1.2). */
export interface Recorded {
  readonly facts: MessageFacts;
  readonly noProgress: boolean;
}

/** Reads a message (rule 1) and records it: the next seq, the writes, and the room's counters. */
export function recordMessage(d: Draft, input: Writing): Recorded {
  const names = d.names;
  const self = input.kind === 'agent' ? input.author : undefined;
  const mentions =
    input.kind === 'system'
      ? []
      : (input.mentions ?? withAddressed(extractMentions(input.text, names, self), input.addressed, names, self));
  let requests: readonly string[] = [];
  let noProgress = false;
  if (input.kind === 'agent') {
    const previous = d.state.lastText[lower(input.author)];
    const people = d.state.humans.filter((name) => !names.some((agent) => same(agent, name)));
    noProgress = isNoProgress(input.text, previous);
    requests =
      input.requests ??
      (noProgress
        ? []
        : requestsOf({
            agents: mentions,
            humans: extractMentions(input.text, people, self),
            author: input.author,
            answering: input.answering ?? [],
            text: input.text,
          }));
  }
  const audience = audienceOf({
    // A DM is private already: its agent sees everything said there, whoever a message names.
    mode: d.setup.kind === 'direct' ? 'off' : d.privacy,
    kind: input.kind,
    author: input.author,
    mentions: [...mentions, ...(input.seenBy ?? [])],
    replyAudience: input.exchange,
  });
  const facts: MessageFacts = {
    seq: d.state.seq + 1,
    author: input.author,
    kind: input.kind,
    mentions,
    requests,
    audience,
    at: input.at,
  };
  // Built field by field, always the same fields: an object spread with conditional parts was the slowest step of a
  // busy room's decision.
  const message: StoredMessage & { readonly toolRuns: readonly ToolRun[] | undefined } = {
    seq: facts.seq,
    author: facts.author,
    kind: facts.kind,
    mentions,
    requests,
    audience,
    at: facts.at,
    authorId: input.authorId,
    text: input.text,
    platformIds: input.platformIds,
    post: input.post,
    files: input.files && input.files.length > 0 ? input.files : undefined,
    toolRuns: input.toolRuns && input.toolRuns.length > 0 ? input.toolRuns : undefined,
  };
  d.write({ type: 'message', message });
  if (input.outsider) d.set({ seq: facts.seq });
  else count(d, facts, input.text);
  return { facts, noProgress };
}

/** The humans an agent awaits: those it asked before and who have not spoken since, and those it asks now. */
function awaited(before: readonly string[], asked: readonly string[]): string[] {
  return [...before.filter((h) => !asked.some((a) => same(a, h))), ...asked].slice(-HUMANS_KEPT);
}

/** Rule 1.4 and the room's memory of who said what: the count, the humans seen, what each agent asked last. */
function count(d: Draft, facts: MessageFacts, text: string): void {
  const { state } = d;
  d.set({ seq: facts.seq });
  if (facts.kind === 'human') {
    const first = state.humans[0];
    d.set({
      control:
        state.control.holder === 'agents' && state.control.count === 0 ? state.control : { holder: 'agents', count: 0 },
      lastHuman: facts.seq,
      ...(state.failed.length > 0 ? { failed: [] } : {}),
      // The humans seen, most recent first (kept as they are when the same human speaks again).
      ...(first !== undefined && same(first, facts.author)
        ? {}
        : {
            humans: [facts.author, ...state.humans.filter((name) => !same(name, facts.author))].slice(0, HUMANS_KEPT),
          }),
    });
  } else if (facts.kind === 'agent') {
    const key = lower(facts.author);
    d.set({
      control: { ...state.control, count: state.control.count + 1 },
      // Every human it asks is awaited until they speak (each asked human's answer wakes it once).
      awaiting: {
        ...state.awaiting,
        [key]: awaited(
          state.awaiting[key] ?? [],
          facts.requests.filter((name) => !d.agent(name)),
        ),
      },
      lastText: { ...state.lastText, [key]: normalised(text) },
      agentPosts: [...state.agentPosts, { author: facts.author, at: facts.at, seq: facts.seq }].slice(
        -AGENT_POSTS_KEPT,
      ),
    });
  }
}
