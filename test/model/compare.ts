/**
 * Observations in a comparable form. Each side's ids are renamed to the order of their first appearance (request
 * ids across the conversation, message seqs per room), and a step's observations are grouped by what they are
 * about — a room's platform, a room's asks, one request, a room's hand-backs, the actions' results — each in
 * order. How the shell interleaves two rooms, or a request's record with a post, is not a rule.
 */
import type { LineInfo, Observed } from './script.js';

export class Renamer {
  private readonly requests = new Map<number, number>();
  private readonly seqs = new Map<string, Map<number, number>>();

  request(id: number): number {
    let n = this.requests.get(id);
    if (n === undefined) {
      n = this.requests.size + 1;
      this.requests.set(id, n);
    }
    return n;
  }

  seq(room: string, seq: number): number {
    let map = this.seqs.get(room);
    if (!map) {
      map = new Map();
      this.seqs.set(room, map);
    }
    let n = map.get(seq);
    if (n === undefined) {
      n = map.size + 1;
      map.set(seq, n);
    }
    return n;
  }
}

function line(info: LineInfo, ids: Renamer): string {
  switch (info.kind) {
    case 'deadline':
      return `deadline #${ids.request(info.request)} late ${info.late.join(',')}`;
    case 'dropped':
      return `dropped ${info.drops.map((d) => `${d.agent}<-${d.humans.join(',')}`).join('; ')}`;
    case 'hand-back':
      return `hand-back ${info.reason}${info.agent ? ` by ${info.agent}` : ''}`;
    case 'failure':
    case 'cut':
      return `${info.kind} ${info.agent}`;
    case 'pair':
      return `pair ${info.a}+${info.b}`;
    case 'card':
      return `card ${info.id} ${info.agent} ${info.tool} ${JSON.stringify(info.input)} for ${info.root ?? 'operators'}`;
    case 'card-answer':
      return `${info.id} ${info.status}${info.by ? ` by ${info.by}` : ''}`;
    case 'card-too-long':
      return `too long for a card: ${info.agent} ${info.tool}`;
    case 'other':
      return `other ${info.text}`;
  }
}

/** One step's observations as sorted `channel: item | item` lines. */
export function canonical(observed: readonly Observed[], ids: Renamer): string[] {
  // Requests first appear when they open; new ids are named in the order they were given out.
  const fresh = [...new Set(observed.flatMap((o) => (o.kind === 'request' ? [o.id] : [])))].sort((a, b) => a - b);
  for (const id of fresh) ids.request(id);
  const channels = new Map<string, string[]>();
  const add = (channel: string, item: string) => channels.set(channel, [...(channels.get(channel) ?? []), item]);
  for (const o of observed) {
    switch (o.kind) {
      case 'ask': {
        // A resume is about its request; where the room's history stood is not part of it.
        const about = o.reason === 'resume' ? '' : ` about ${ids.seq(o.room, o.about)}`;
        const requests = o.requests.map((r) => `#${ids.request(r)}`).join(',');
        const resumes = o.resumes !== undefined ? ` resumes #${ids.request(o.resumes)}` : '';
        add(
          `asks ${o.room}`,
          `${o.agent} ${o.reason}${about} for [${requests}] humans [${o.humans.join(',')}]${resumes} (${o.frame})`,
        );
        break;
      }
      case 'post':
        add(`platform ${o.room}`, `${o.agent}: ${JSON.stringify(o.text)}`);
        break;
      case 'line':
        add(`platform ${o.room}`, `[${line(o.line, ids)}]`);
        break;
      case 'request': {
        const answers = o.answers.map((a) => `${a.participant} ${a.outcome} ${JSON.stringify(a.text)}`).join('; ');
        add(`request #${ids.request(o.id)}`, `${o.status} {${answers}}`);
        break;
      }
      case 'hand-back':
        add(`hand-back ${o.room}`, o.reason);
        break;
      case 'action':
        add('actions', o.result);
        break;
      case 'tell':
        add(`tells ${o.room}`, `${o.human} ${o.why} [${o.agents.join(',')}]`);
        break;
      case 'approval-result':
        add(
          `approval results ${o.room}`,
          `${o.agent} ${o.tool} ${JSON.stringify(o.input)} ${o.approved ? 'approved' : 'refused'} (${o.reason})`,
        );
        break;
      case 'approval-record':
        add(`approval records ${o.room}`, `${o.id} ${o.status}${o.by ? ` by ${o.by}` : ''}`);
        break;
      case 'approval-answer':
        add(`approval answers ${o.room}`, o.text);
        break;
    }
  }
  return [...channels.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([c, items]) => `${c}: ${items.join(' | ')}`);
}

/** The first line where two canonical steps differ, as "model / machine". */
export function firstDifference(model: readonly string[], machine: readonly string[]): string | undefined {
  for (let i = 0; i < Math.max(model.length, machine.length); i++) {
    if (model[i] !== machine[i]) return `model:   ${model[i] ?? '(nothing)'}\nmachine: ${machine[i] ?? '(nothing)'}`;
  }
  return undefined;
}
