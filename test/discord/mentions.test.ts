import { describe, expect, it } from 'vitest';
import { Directory, mentionsToNames, namesToMentions } from '../../adapters/discord/mentions.js';

function directory(): Directory {
  const dir = new Directory();
  dir.setAgent('code', '100');
  dir.setAgent('data', '200');
  dir.rememberHuman('900', 'Alice Smith');
  return dir;
}

describe('Discord mentions', () => {
  it('turns an agent bot mention into @agent, with or without the nickname form', () => {
    expect(mentionsToNames('<@100> and <@!200>, look', directory())).toBe('@code and @data, look');
  });

  it('turns a human mention into the display name with underscores', () => {
    expect(mentionsToNames('ask <@900>', directory())).toBe('ask @Alice_Smith');
    expect(mentionsToNames('ask <@901>', directory(), new Map([['901', 'Bob  Jones']]))).toBe('ask @Bob_Jones');
  });

  it('leaves an unknown user mention as written', () => {
    expect(mentionsToNames('who is <@555>?', directory())).toBe('who is <@555>?');
  });

  it('turns @agent and a known @Human_Name into real mentions, case-insensitively', () => {
    expect(namesToMentions('@Code please, then @alice_smith', directory())).toBe('<@100> please, then <@900>');
  });

  it('leaves code, e-mail addresses and unknown names alone', () => {
    const text = 'mail bob@code.org, `@code` and\n```\n@data\n```\n@nobody';
    expect(namesToMentions(text, directory())).toBe(text);
  });

  it('keeps punctuation after a mention', () => {
    expect(namesToMentions('thanks @data!', directory())).toBe('thanks <@200>!');
    expect(namesToMentions('(@code)', directory())).toBe('(<@100>)');
  });

  it('mentions humans with non-ASCII names back', () => {
    const dir = directory();
    dir.rememberHuman('902', 'José Núñez');
    expect(namesToMentions('gracias @José_Núñez.', dir)).toBe('gracias <@902>.');
  });
});
