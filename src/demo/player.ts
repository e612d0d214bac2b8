/**
 * The demo's scripted model: plays the example session (a user asks @data about the top customers
 * in sales.csv, @data asks @code, @code runs Python in the sandbox, @data interprets). It reads the
 * real tool output from the conversation, so what @data says follows from what the command printed.
 */
import type { ScriptReply, ScriptRequest } from './local-model.js';

export const DEMO_QUESTION = '@data who are our top 3 customers by revenue in sales.csv?';

export const DEMO_COMMAND =
  "python3 -c \"import csv, collections; t = collections.Counter(); [t.update({r['customer']: float(r['amount'])}) " +
  "for r in csv.DictReader(open('sales.csv'))]; [print(f'{c},{v:.2f}') for c, v in t.most_common(3)]; " +
  "print(f'TOTAL,{sum(t.values()):.2f}')\"";

const text = (message: { content?: unknown } | undefined) =>
  typeof message?.content === 'string' ? message.content : '';

export function speakerOf(request: ScriptRequest): string {
  return /You are @([A-Za-z0-9_-]+) in a shared chat room/.exec(text(request.messages[0]))?.[1] ?? '';
}

/** `name,value` lines of the command's output. */
function parseRows(output: string): Array<{ name: string; value: number }> {
  return output
    .split('\n')
    .map((line) => /^(.+),(\d+(?:\.\d+)?)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[1] ?? '', value: Number(m[2]) }));
}

const money = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 0 });

function interpret(codeReply: string): string {
  const rows = parseRows(codeReply);
  const total = rows.find((r) => r.name === 'TOTAL')?.value;
  const top = rows.filter((r) => r.name !== 'TOTAL');
  const [first] = top;
  if (!first || !total) return "I could not read @code's numbers; could you ask it again, in a table?";
  const share = (top.reduce((sum, r) => sum + r.value, 0) / total) * 100;
  return [
    `Our top ${top.length} customers: ${top.map((r) => `${r.name} (${money(r.value)})`).join(', ')}.`,
    `${first.name} alone brings in ${((first.value / total) * 100).toFixed(0)}% of revenue, and the top ${top.length} together ${share.toFixed(0)}%.`,
    'That concentration is worth watching; next I would look at how each of them trends month by month.',
  ].join(' ');
}

/** The newest room message: the one before the bridge's note, which is the request's final user message. */
function newestRoomMessage(request: ScriptRequest): { role: string; content?: unknown } | undefined {
  for (let i = request.messages.length - 1; i > 0; i--) {
    if (request.messages[i]?.role === 'user') return request.messages[i - 1];
  }
  return undefined;
}

/** A tool's output as the bridge hands it over, inside its untrusted block: the block's body. */
function blockBody(content: string): string {
  return content.replace(/^\s*<untrusted [^>\n]*>\n?/, '').replace(/\n?<\/untrusted id="\d+">\s*$/, '');
}

export function demoReply(request: ScriptRequest): ScriptReply {
  const speaker = speakerOf(request);
  const last = request.messages.at(-1);
  const lastText = text(newestRoomMessage(request));
  if (speaker === 'data' && lastText.startsWith('[@user]:')) {
    return {
      content: '@code please load sales.csv and give me the top 3 customers by total revenue, and the overall total.',
    };
  }
  if (speaker === 'code' && last?.role === 'tool') {
    return {
      content: `@data here are the totals (customer,revenue), with the grand total last:\n${blockBody(text(last)).trim()}`,
    };
  }
  if (speaker === 'code' && lastText.includes('@code please load sales.csv')) {
    return { toolCalls: [{ name: 'bash', arguments: { command: DEMO_COMMAND } }] };
  }
  if (speaker === 'data' && /\[@code\]: @data here are the totals/.test(lastText)) {
    return { content: interpret(lastText.slice(lastText.lastIndexOf('[@code]: '))) };
  }
  return { content: '[pass]' };
}
