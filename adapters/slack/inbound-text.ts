import { personName } from '../shared/mention-name.js';

/** Looks up how a Slack user id should read in the core's text: `agentname` or `display_name`. */
export type NameOf = (userId: string) => string | undefined;

/** Every user id mentioned as `<@U…>` or `<@U…|label>`, so names can be fetched before converting. */
export function mentionedUserIds(text: string): string[] {
  return [...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1] ?? ''))];
}

/**
 * Slack's message markup to the core's plain text: user mentions become `@name`,
 * channel links `#name`, `<!here>` `@here`, links `text (url)` or the bare url, and
 * the `&amp; &lt; &gt;` escapes are undone last.
 */
export function slackToPlain(
  text: string,
  nameOf: NameOf,
  isAgentName: (name: string) => boolean = () => false,
): string {
  return text
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => {
      // A user the directory does not know is none of our agents: their label never reads as one.
      const name = nameOf(id) ?? (label ? personName(label, isAgentName) : undefined);
      return `@${name ?? id}`;
    })
    .replace(/<#([CG][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => `#${label || id}`)
    .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_m, label?: string) => label ?? '@team')
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]*)>/g, (_m, url: string, label: string) => {
      const bare = url.replace(/^mailto:/, '');
      return label === bare || label === url ? label : `${label} (${url})`;
    })
    .replace(/<((?:https?|mailto):[^>]+)>/g, (_m, url: string) => url.replace(/^mailto:/, ''))
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
