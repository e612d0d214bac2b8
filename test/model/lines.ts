/** The bridge's lines, read back into what they say (both sides are compared on this, not on wording). */
import type { LineInfo } from './script.js';

const names = (list: string) => [...list.matchAll(/@([^\s,;.]+)/g)].map((m) => m[1] ?? '');

export function classifyLine(text: string): LineInfo {
  let m = /^@(\S+) could not answer: /.exec(text);
  if (m) return { kind: 'failure', agent: m[1] ?? '' };
  m = /^@human (\d+) agent messages in a row/.exec(text);
  if (m) return { kind: 'hand-back', reason: 'turn limit' };
  m = /^@human (\S+) is passing control to you$/.exec(text);
  if (m) return { kind: 'hand-back', reason: 'world pass', agent: m[1] ?? '' };
  m = /^@(\S+) stopped after \d+ tool rounds/.exec(text);
  if (m) return { kind: 'hand-back', reason: 'tool round limit', agent: m[1] ?? '' };
  m = /^@(\S+)'s reply could not be posted/.exec(text);
  if (m) return { kind: 'hand-back', reason: 'post failed', agent: m[1] ?? '' };
  m = /^Request #(\d+) from @\S+ reached its deadline: (.*) did not answer in time/.exec(text);
  if (m) return { kind: 'deadline', request: Number(m[1]), late: names(m[2] ?? '') };
  m = /^@human @(\S+) and @(\S+) have exchanged more than/.exec(text);
  if (m) return { kind: 'pair', a: m[1] ?? '', b: m[2] ?? '' };
  m = /^[^:]+: (.*)\. Ask again if it still matters\.$/.exec(text);
  if (m) {
    const drops = (m[1] ?? '').split('; ').map((part) => {
      const [agent, ...rest] = names(part);
      return { agent: agent ?? '', humans: rest };
    });
    return { kind: 'dropped', drops };
  }
  m = /^@(\S+)'s turn was cut by \d+ restarts/.exec(text);
  if (m) return { kind: 'cut', agent: m[1] ?? '' };
  m = /^Approval needed \[(\w+)\]: @(\S+) wants to run (\S+):\n```\n([\s\S]*)\n```\n(.*)$/.exec(text);
  if (m) {
    const root = /^Asked for by @(\S+): @\1 or an operator may answer with/.exec(m[5] ?? '')?.[1] ?? null;
    return { kind: 'card', id: m[1] ?? '', agent: m[2] ?? '', tool: m[3] ?? '', input: m[4] ?? '', root };
  }
  m = /^(.+) (approved|denied) (\w+): @\S+ (?:runs|does not run) it\.$/.exec(text);
  if (m) return { kind: 'card-answer', id: m[3] ?? '', status: m[2] ?? '', by: m[1] ?? '' };
  m = /^Nobody answered (\w+) in time: @\S+ does not run it\.$/.exec(text);
  if (m) return { kind: 'card-answer', id: m[1] ?? '', status: 'expired' };
  m = /^@(\S+) wanted to run (\S+), but the call is too long to show in full/.exec(text);
  if (m) return { kind: 'card-too-long', agent: m[1] ?? '', tool: m[2] ?? '' };
  return { kind: 'other', text };
}

/** A refused person's line (rule 16.4), read back into why and which agents. */
export function classifyTell(text: string): { why: 'user' | 'channel'; agents: string[] } {
  const m = /^(.+?) (?:does|do) not answer in this channel/.exec(text);
  if (m) return { why: 'channel', agents: (m[1] ?? '').split(', ') };
  const u = /^(.+?) takes? requests only from people on the bridge's access list/.exec(text);
  return { why: 'user', agents: u ? (u[1] ?? '').split(', ') : [`unreadable: ${text}`] };
}
