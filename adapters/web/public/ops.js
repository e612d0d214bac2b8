// The operator console: every room of every platform with its control state, the open requests as trees with their
// deadlines, each agent's usage and cost, each room's sandbox, buttons for /pass, /reset and /privacy — and, for any
// message of any room, why: who was woken and why, who passed, who failed and how, hand-backs and their reasons.
import { api, el, timeOf } from './dom.js';
import { messageItem } from './transcript.js';

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 2000;
const number = (n) => n.toLocaleString('en-US');

const me = await api('/api/me');
$('me').textContent = `Signed in as ${me.name} (operator)`;
let whyRoom = null;
let whyOlder = null;
/** What the shown room was at (newest message, control, turns): when it changes, its messages are read again. */
let whyState = null;

// --- rooms ----------------------------------------------------------------------------------------------------
function controlText(control) {
  const count = `${control.count} of ${control.limit} agent messages in a row`;
  if (control.holder === 'agents') return `agents may speak (${count})`;
  return `handed back to the humans${control.reason ? `: ${control.reason}` : ''} (${count})`;
}

async function command(room, name, args = '') {
  try {
    const { answer } = await api('/api/ops/command', { method: 'POST', json: { room, name, args } });
    $('answer').textContent = `${room}: ${answer}`;
  } catch (error) {
    $('answer').textContent = `${room}: /${name} failed: ${error.message}`;
  }
  await refresh();
}

function actionButton(label, room, name, args, describedBy) {
  const button = el('button', { attrs: { type: 'button', 'aria-describedby': describedBy } }, [label]);
  button.addEventListener('click', () => void command(room, name, args));
  return button;
}

function roomRow(room, online) {
  const id = `room-${room.key.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const who = room.direct
    ? ` (private room of @${room.direct})`
    : room.kind === 'pair'
      ? ' (agents’ private chat)'
      : '';
  const people = online[room.channel] && room.platform === 'web' ? online[room.channel] : [];
  const working = [
    ...room.working.map((agent) => `@${agent} writing`),
    ...room.queued.map((agent) => `@${agent} waiting`),
    ...(room.approvals ?? []).map(
      (card) =>
        `${card.id}: @${card.agent}'s ${card.tool} ${card.status}${card.status === 'waiting' ? ` for ${card.root ? `@${card.root} or an operator` : 'an operator'}` : ''}`,
    ),
  ];
  const why = el('button', { attrs: { type: 'button', 'aria-describedby': id } }, ['Why…']);
  why.addEventListener('click', () => void showWhy(room.key, true));
  // An operator answers a waiting card from here as from the room (rule 17: operators may answer every card).
  const cards = (room.approvals ?? [])
    .filter((card) => card.status === 'waiting')
    .flatMap((card) => [
      actionButton(`Approve ${card.id}`, room.key, 'approve', card.id, id),
      actionButton(`Deny ${card.id}`, room.key, 'deny', card.id, id),
    ]);
  return el('tr', { attrs: { 'data-room': room.key } }, [
    el('th', { attrs: { scope: 'row', id } }, [
      room.key,
      who,
      people.length > 0 ? el('span', { className: 'muted' }, [` · here: ${people.join(', ')}`]) : null,
    ]),
    el('td', { className: `control ${room.control.holder}` }, [controlText(room.control)]),
    el('td', {}, [working.length > 0 ? working.join(', ') : 'nobody']),
    el('td', {}, [room.privacy]),
    el('td', {}, [
      room.sandbox ?? 'unknown',
      ...(room.mcp ?? []).map((line) => el('div', { className: 'muted' }, [line])),
    ]),
    el('td', {}, [
      el('div', { className: 'buttons' }, [
        ...cards,
        actionButton('Pass', room.key, 'pass', '', id),
        actionButton('Reset', room.key, 'reset', '', id),
        actionButton(
          room.privacy === 'mentions' ? 'Privacy off' : 'Privacy: mentions',
          room.key,
          'privacy',
          room.privacy === 'mentions' ? 'off' : 'mentions',
          id,
        ),
        why,
      ]),
    ]),
  ]);
}

// --- requests -------------------------------------------------------------------------------------------------
function requestTree(nodes) {
  return el(
    'ul',
    { className: 'tree' },
    nodes.map((node) => {
      const awaited = node.awaited.map((p) => `@${p.name}${p.outcome ? ` (${p.outcome})` : ' (waiting)'}`).join(', ');
      const left = Math.round((node.deadline - Date.now()) / 1000);
      const deadline = left > 0 ? `deadline in ${Math.floor(left / 60)} min ${left % 60} s` : 'deadline passed';
      return el('li', {}, [
        el('p', {}, [
          el('strong', {}, [`#${node.id}`]),
          ` @${node.requester} in ${node.target}: ${node.status}; asks ${awaited}; ${deadline} (`,
          timeOf(node.deadline),
          ')',
        ]),
        el('p', { className: 'muted' }, [node.text]),
        node.children.length > 0 ? requestTree(node.children) : null,
      ]);
    }),
  );
}

// --- usage ----------------------------------------------------------------------------------------------------
function usageRow(agent) {
  return el('tr', {}, [
    el('th', { attrs: { scope: 'row' } }, [
      `@${agent.agent}`,
      el('span', { className: 'muted' }, [` ${agent.activation}`]),
    ]),
    el('td', {}, [agent.model]),
    el('td', {}, [number(agent.calls)]),
    el('td', {}, [number(agent.input)]),
    el('td', {}, [number(agent.cached)]),
    el('td', {}, [number(agent.output)]),
    el('td', {}, [agent.cost === undefined ? 'no price set' : `$${agent.cost.toFixed(4)}`]),
    el('td', {}, [agent.spend === undefined ? 'not counted (no price)' : spendText(agent.spend)]),
  ]);
}

/** Today's spend against a daily limit: `$0.0123 of $2.00 (reached)`, with what calls under way hold. */
function spendText(spend) {
  const money = (usd) => (usd >= 1 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`);
  const held = spend.held > 0 ? ` (+${money(spend.held)} held)` : '';
  if (spend.limit === null) return `${money(spend.spent)}${held}, no limit`;
  return `${money(spend.spent)}${held} of ${money(spend.limit)}${spend.spent >= spend.limit ? ', reached' : ''}`;
}

async function refresh() {
  try {
    const view = await api('/api/ops/overview');
    const focused = document.activeElement?.closest('tr')?.dataset.room;
    const label = document.activeElement?.textContent;
    $('rooms-table').tBodies[0].replaceChildren(...view.rooms.map((room) => roomRow(room, view.online)));
    // A refresh keeps the keyboard where it was.
    if (focused) {
      const row = [...$('rooms-table').tBodies[0].rows].find((r) => r.dataset.room === focused);
      [...(row?.querySelectorAll('button') ?? [])].find((b) => b.textContent === label)?.focus();
    }
    $('requests').replaceChildren(view.requests.length > 0 ? requestTree(view.requests) : el('p', {}, ['None open.']));
    $('usage-table').tBodies[0].replaceChildren(...view.agents.map(usageRow));
    $('bridge-spend').textContent = view.spend ? `The bridge today: ${spendText(view.spend)}.` : '';
    $('access').textContent = view.access ?? '';
    pairRoom = view.rooms[0]?.key ?? pairRoom;
    const select = $('why-room');
    const keys = view.rooms.map((room) => room.key);
    if ([...select.options].map((o) => o.value).join() !== keys.join()) {
      select.replaceChildren(...keys.map((key) => el('option', { attrs: { value: key } }, [key])));
      if (whyRoom) select.value = whyRoom;
    }
    const shown = view.rooms.find((room) => room.key === whyRoom);
    const state = shown && JSON.stringify([shown.seq, shown.control, shown.working, shown.queued]);
    if (!whyRoom && keys[0]) void showWhy(keys[0], false);
    else if (shown && state !== whyState) void showWhy(shown.key, false);
    if (shown) whyState = state;
    $('updated').textContent = `Updated ${new Date(view.at).toLocaleTimeString()}`;
  } catch (error) {
    $('updated').textContent = `Could not update: ${error.message}`;
  }
}

// --- why ------------------------------------------------------------------------------------------------------
const REASONS = {
  direct: 'it is their private room',
  awaiting: 'they had asked the author',
  addressed: 'named in the message',
  request: 'a request asked them',
  resume: 'their request was answered',
  always: 'they answer every message',
  mentioned: 'mentioned',
  'chat-request': 'a private chat request',
};

/** Who the access policy kept its author from waking (rule 16), in words; '' when nobody. */
function refusedText(record) {
  if (!record.refused) return '';
  const why = record.refused.why === 'channel' ? 'not a channel they answer in' : 'not on the access list';
  return ` Access: ${record.refused.agents.map((a) => `@${a}`).join(', ')} refused (${why}).`;
}

const SKIPS = {
  activation: 'not named',
  privacy: 'cannot see it',
  access: 'access policy',
  answered: 'answered already',
  busy: 'busy',
  failed: 'failed since the last human message',
  'pair-guard': 'paused with the author',
};

/** Who was not woken and why, in words; '' when nobody. */
function skippedText(record) {
  if (!record.skipped || record.skipped.length === 0) return '';
  return ` Not woken: ${record.skipped.map((s) => `@${s.agent} (${SKIPS[s.why] ?? s.why})`).join(', ')}.`;
}

/** The message's trace id (from its W3C traceparent), to look it up in Jaeger, Tempo or Honeycomb; '' when none. */
export function traceText(record) {
  const id = typeof record.trace === 'string' ? record.trace.split('-')[1] : undefined;
  return id ? ` Trace ${id}.` : '';
}

/** One record of why, in words. */
export function whyText(record) {
  switch (record.kind) {
    case 'routed': {
      const woke =
        record.woken.length === 0
          ? 'Nobody was woken.'
          : `Woke ${record.woken
              .map((entry) => {
                const [agent, reason] = entry.split(':');
                return `@${agent} (${REASONS[reason] ?? reason})`;
              })
              .join(', ')}.`;
      return `${woke}${refusedText(record)}${skippedText(record)}${traceText(record)}`;
    }
    case 'passed':
      return `@${record.agent} passed.`;
    case 'failed':
      return `@${record.agent} failed: ${record.reason}`;
    case 'stopped':
      return `@${record.agent} was stopped (${record.reason}).`;
    case 'hand-back':
      return `Control went back to the humans: ${record.reason}.`;
    case 'dropped':
      return `Questions dropped: ${record.drops.map((d) => `@${d.agent} (for ${d.humans.join(', ')})`).join('; ')}.`;
    case 'request':
      return `Request #${record.id}: ${record.status}.`;
    case 'approval':
      return record.status === 'asked'
        ? `Approval ${record.id}: @${record.agent}'s ${record.tool} waits for ${record.by ? `@${record.by} or an operator` : 'an operator'}.`
        : `Approval ${record.id}: @${record.agent}'s ${record.tool} ${record.status}${record.by ? ` (${record.by})` : ''}.`;
    default:
      return JSON.stringify(record);
  }
}

function whyItem(message) {
  const item = messageItem(message, new Set(me.agents.map((a) => a.toLowerCase())));
  const lines =
    message.why.length > 0
      ? message.why.map((entry) => el('li', { className: `why-${entry.record.kind}` }, [whyText(entry.record)]))
      : [
          el('li', { className: 'muted' }, [
            message.role === 'system' ? 'The bridge’s own line: it wakes nobody.' : 'Nothing recorded.',
          ]),
        ];
  item.append(el('ul', { className: 'reasons', attrs: { 'aria-label': 'Why' } }, lines));
  return item;
}

async function showWhy(room, focus) {
  whyRoom = room;
  $('why-room').value = room;
  const page = await api(`/api/ops/messages?room=${encodeURIComponent(room)}`);
  $('why').replaceChildren(...page.messages.map(whyItem));
  whyOlder = page.older;
  $('why-older').hidden = whyOlder === null;
  if (focus) $('why-heading').focus();
}

$('why-room').addEventListener('change', () => void showWhy($('why-room').value, false));
$('why-older').addEventListener('click', async () => {
  if (!whyRoom || whyOlder === null) return;
  const page = await api(`/api/ops/messages?room=${encodeURIComponent(whyRoom)}&before=${whyOlder}`);
  $('why').prepend(...page.messages.map(whyItem));
  whyOlder = page.older;
  $('why-older').hidden = whyOlder === null;
});

/** /pair from the console: any room carries it (pairing codes are the bridge's, not a room's). */
let pairRoom = '';
$('pair-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const code = $('pair-code').value.trim();
  if (code && pairRoom) void command(pairRoom, 'pair', code).then(() => ($('pair-code').value = ''));
});
$('pair-list').addEventListener('click', () => pairRoom && void command(pairRoom, 'pair', ''));

await refresh();
setInterval(() => void refresh(), REFRESH_MS);
