/** What an agent's Slack app manifest depends on. */
export interface ManifestAgent {
  readonly name: string;
  /** The control app carries the operator slash commands. */
  readonly control: boolean;
  /** Socket Mode (default) or HTTP events at `requestUrl`. */
  readonly socketMode: boolean;
  /** For HTTP mode: the public URL Slack calls (…/slack/events/<agent>). */
  readonly requestUrl?: string | undefined;
}

/**
 * Bot scopes: read and write in channels, private channels, DMs and group DMs; names of users and their user groups
 * (the access policy's ACCESS_ROLES); shared files; and
 * uploads (files:write: a reply longer than MAX_REPLY_POSTS messages ends with the whole reply attached).
 */
const BOT_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'channels:read',
  'chat:write',
  'files:read',
  'files:write',
  'groups:history',
  'groups:read',
  'im:history',
  'im:read',
  'im:write',
  'mpim:history',
  'mpim:read',
  'users:read',
  'usergroups:read',
];

const BOT_EVENTS = ['app_mention', 'message.channels', 'message.groups', 'message.im', 'message.mpim'];

/** The operator slash commands the control app registers (and answers: identity.ts reads this list). */
export const COMMANDS = [
  { command: '/pass', description: 'Stop the agents here and give control back to the humans', usage_hint: '[agent]' },
  { command: '/reset', description: "Reset this room's turns and sandbox", usage_hint: '[agent|workspace]' },
  { command: '/status', description: 'Show who holds control and what is running here', usage_hint: '' },
  { command: '/privacy', description: 'Show or set what agents see in this room', usage_hint: '[mentions|off]' },
  {
    command: '/budget',
    description: "Show today's spend against the spending limits, or set a limit",
    usage_hint: '[bridge|room <dollars>] [agent <name> <dollars>]',
  },
  { command: '/access', description: 'Show who may make the agents act here', usage_hint: '' },
  {
    command: '/pair',
    description: 'Approve a DM pairing code, list those waiting, or end a pairing',
    usage_hint: '[code|list|revoke <name>]',
  },
  { command: '/approve', description: "Approve an agent's action waiting on its card", usage_hint: '<id>' },
  { command: '/deny', description: "Deny an agent's action waiting on its card", usage_hint: '<id>' },
];

/**
 * A Slack app manifest for one agent (paste it at api.slack.com/apps → Create New App →
 * From a manifest). Every agent is its own app and bot user; the control app also
 * gets /pass, /reset, /status, /privacy and /budget.
 */
export function buildManifest(agent: ManifestAgent): Record<string, unknown> {
  const url = agent.socketMode ? undefined : agent.requestUrl;
  return {
    display_information: {
      name: agent.name,
      description: `${agent.name}, an agent at the Roundtable`,
    },
    features: {
      app_home: { home_tab_enabled: false, messages_tab_enabled: true, messages_tab_read_only_enabled: false },
      bot_user: { display_name: agent.name, always_online: true },
      ...(agent.control
        ? {
            slash_commands: COMMANDS.map((c) => ({
              ...c,
              ...(url ? { url } : {}),
              should_escape: false,
            })),
          }
        : {}),
    },
    oauth_config: {
      scopes: { bot: agent.control ? [...BOT_SCOPES, 'commands'] : BOT_SCOPES },
    },
    settings: {
      event_subscriptions: { ...(url ? { request_url: url } : {}), bot_events: BOT_EVENTS },
      // HTTP mode: Slack posts every request (events, commands, interactions) to the app's URL. Interactivity is on
      // in Socket Mode too: a click on an approval card's buttons reaches the app only then.
      interactivity: url ? { is_enabled: true, request_url: url } : { is_enabled: true },
      org_deploy_enabled: false,
      socket_mode_enabled: agent.socketMode,
      token_rotation_enabled: false,
    },
  };
}
