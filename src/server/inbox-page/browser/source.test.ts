import { describe, expect, it } from 'vitest';
import { tokenize } from './source.js';

const joined = (src: string) =>
  tokenize(src)
    .map(([, t]) => t)
    .join('');
const kinds = (src: string) => tokenize(src).filter(([k]) => k !== '');

describe("the HTML source tab's tokenizer", () => {
  it('names the parts of tags, comments, entities and the CSS of style elements', () => {
    expect(kinds('<!DOCTYPE html><a href="x" data-on=1 hidden>A &amp; B</a><!-- c -->')).toEqual([
      ['comment', '<!DOCTYPE html>'],
      ['punct', '<'],
      ['tag', 'a'],
      ['attr', 'href'],
      ['punct', '='],
      ['val', '"x"'],
      ['attr', 'data-on'],
      ['punct', '='],
      ['val', '1'],
      ['attr', 'hidden'],
      ['punct', '>'],
      ['entity', '&amp;'],
      ['punct', '</'],
      ['tag', 'a'],
      ['punct', '>'],
      ['comment', '<!-- c -->'],
    ]);
    expect(kinds('<style>/* x */ @media (max-width: 600px) { a:hover { color: red; } } b{x:"<p>"}</style>')).toEqual([
      ['punct', '<'],
      ['tag', 'style'],
      ['punct', '>'],
      ['comment', '/* x */'],
      ['at', '@media'],
      ['prop', 'color'],
      ['prop', 'x'],
      ['val', '"<p>"'],
      ['punct', '</'],
      ['tag', 'style'],
      ['punct', '>'],
    ]);
    // A script's text is not HTML: the tag inside the string is text.
    expect(kinds('<script>let s = "<b>"</script>').map(([k, t]) => `${k}:${t}`)).toEqual([
      'punct:<',
      'tag:script',
      'punct:>',
      'punct:</',
      'tag:script',
      'punct:>',
    ]);
  });

  it('gives back every character of any input, broken HTML too, in order', () => {
    for (const src of [
      '',
      '<',
      '< p>',
      'a < b && c > d',
      '<p class="unclosed>text',
      '<p a=\'x\' b="y" c=z/>',
      '<!-- never closed',
      '<style>never closed { a: b',
      '<img src=x/ alt=>',
      '</>',
      '<a\nhref\n=\n"x\ny"\n>\r\n</a>',
    ])
      expect(joined(src), src).toBe(src);
    // Random soup of the characters that matter to the tokenizer.
    const alphabet = [
      '<',
      '>',
      '/',
      '=',
      '"',
      "'",
      '!',
      '-',
      'a',
      'p',
      'style',
      'script',
      ' ',
      '\n',
      '&',
      ';',
      '{',
      '}',
      ':',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 500; n++) {
      const src = Array.from({ length: 40 }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      expect(joined(src), JSON.stringify(src)).toBe(src);
    }
  });
});
