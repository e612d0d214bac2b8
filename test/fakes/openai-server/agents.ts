/**
 * Reading the bridge's requests from the model's side: which agent a request is for, what it was shown, and
 * batched turns (one structured call for several agents, seed 004). `perAgent` lets a script answer each agent
 * the same way whether it is asked on its own or in a batch.
 */
import type { FakeReply, RecordedRequest, Responder } from './types.js';

type Request = Pick<RecordedRequest, 'messages'> & { body?: Record<string, unknown> };

const text = (content: unknown) => (typeof content === 'string' ? content : '');
const SITUATION = '>>> SITUATION <<<\n';

/** The agents a batched request asks (named by its last line, in order); undefined for other requests. */
export function batchAgentsOf(request: Request): string[] | undefined {
  const format = request.body?.response_format as { type?: unknown; json_schema?: { name?: unknown } } | undefined;
  if (format?.type !== 'json_schema' || format.json_schema?.name !== 'agent_replies') return undefined;
  const last = text(request.messages.at(-1)?.content).split('\n').at(-1) ?? '';
  const names = /^Answer for exactly these agents, in this order: (.*)\.$/.exec(last)?.[1] ?? '';
  return [...names.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '');
}

/** The agent an individual request is for (from the card in its system prompt). */
export function agentOfRequest(request: Request): string {
  return /You are @([A-Za-z0-9_-]+) in a shared chat room/.exec(text(request.messages[0]?.content))?.[1] ?? '?';
}

/**
 * A batched request's parts: the room transcript, and each asked agent's segment by name (its seat at the table,
 * then what it is shown this turn: recent actions and situation).
 */
export function batchParts(request: Request): { transcript: string; segments: Map<string, string> } {
  const body = text(request.messages[1]?.content);
  const rule = '='.repeat(80);
  const [, , seats = '', , transcript = '', , asked = ''] = body
    .split(`${rule}\n`)
    .map((part) => part.replace(/\n$/, ''));
  const seatOf = new Map<string, string>();
  for (const part of seats.split(/^-{80}\nAGENT \d+: @/m).slice(1)) seatOf.set(part.slice(0, part.indexOf('\n')), part);
  const segments = new Map<string, string>();
  for (const part of asked.split(/^-{80}\n@/m).slice(1)) {
    const name = part.slice(0, part.indexOf('\n'));
    segments.set(name, `${seatOf.get(name) ?? name}\n${part.slice(part.indexOf('\n') + 1)}`);
  }
  return { transcript: transcript.replace(/\n\n>>> OLDER MESSAGES THAT MAY BE RELEVANT <<<[\s\S]*$/, ''), segments };
}

/** What one agent was shown: its newest room message (`[@speaker]: text`) and its situation. */
export interface AgentView {
  readonly agent: string;
  /** Asked within a batched call (it cannot use tools there: a tool call becomes `[tools]`). */
  readonly batched: boolean;
  readonly newest: string;
  readonly situation: string;
  readonly request: RecordedRequest;
}

/** The newest message of a transcript: its last line that opens with a speaker. */
function newestLine(transcript: string): string {
  const lines = transcript.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (/^\[(@[^\]]+|system)\]: /.test(line)) return lines.slice(i).join('\n');
  }
  return '';
}

/** The final user message of an individual request is the bridge's note; the room message before it is newest. */
function individualView(request: RecordedRequest): AgentView {
  let note = -1;
  for (let i = request.messages.length - 1; i >= 0; i--) {
    if (request.messages[i]?.role === 'user') {
      note = i;
      break;
    }
  }
  const noteText = text(request.messages[note]?.content);
  const at = noteText.indexOf(SITUATION);
  return {
    agent: agentOfRequest(request),
    batched: false,
    newest: note > 1 ? text(request.messages[note - 1]?.content) : '',
    situation: at < 0 ? '' : noteText.slice(at + SITUATION.length),
    request,
  };
}

/**
 * A responder for scripts whose answer depends on the agent and what it sees: asked alone, `answer` gives the
 * reply; in a batch, each agent's answer goes under its key (a reply with tool calls becomes `[tools]`, as the
 * agent would need its tools).
 */
export function perAgent(answer: (view: AgentView) => FakeReply | string): Responder {
  const reply = (view: AgentView): FakeReply => {
    const given = answer(view);
    return typeof given === 'string' ? { content: given } : given;
  };
  return (request) => {
    const names = batchAgentsOf(request);
    if (!names) return reply(individualView(request));
    const { transcript, segments } = batchParts(request);
    const newest = newestLine(transcript);
    const agents: Record<string, string> = {};
    for (const agent of names) {
      const segment = segments.get(agent) ?? '';
      const at = segment.indexOf(SITUATION);
      const situation = at < 0 ? '' : segment.slice(at + SITUATION.length).trimEnd();
      const given = reply({ agent, batched: true, newest, situation, request });
      agents[agent] = given.toolCalls && given.toolCalls.length > 0 ? '[tools]' : (given.content ?? '');
    }
    return { agents };
  };
}
