// Splits a prompt into the tokens the lexical embedding and the prompt guard
// read: words of any script written with spaces (letters, marks and digits,
// an apostrophe inside kept: "don't", "l'eau"), and runs of Chinese and
// Japanese script (Han, kana), which are written without spaces. A hand-written
// scan rather than a global regular expression: matchAll allocates an array a
// match, and a 20 KB conversation has thousands of words.

export const OTHER = 0;
export const WORD = 1;
export const CJK = 2;
export type TokenKind = typeof WORD | typeof CJK;

const UNKNOWN = 255;
const CJK_CHARACTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々〆]/u;
const WORD_CHARACTER = /[\p{L}\p{M}\p{N}]/u;
/** The kind of each code point of the Basic Multilingual Plane, filled in as met (a pure function of the code point). */
const BMP_KINDS = new Uint8Array(0x10000).fill(UNKNOWN);

function kindOf(codePoint: number): number {
  if (codePoint < 0x80) {
    // ASCII, the common case: letters and digits.
    return (codePoint >= 0x61 && codePoint <= 0x7a) || (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a) ? WORD : OTHER;
  }
  if (codePoint < 0x10000) {
    let kind = BMP_KINDS[codePoint];
    if (kind === UNKNOWN) BMP_KINDS[codePoint] = kind = classify(String.fromCharCode(codePoint));
    return kind;
  }
  return classify(String.fromCodePoint(codePoint));
}

function classify(character: string): number {
  return CJK_CHARACTER.test(character) ? CJK : WORD_CHARACTER.test(character) ? WORD : OTHER;
}

const APOSTROPHE = 0x27;

/**
 * Calls `visit` with each token in order, the index where it starts, and
 * whether it is plain ASCII (most are: the callers skip their Unicode work).
 */
export function forEachToken(text: string, visit: (token: string, kind: TokenKind, start: number, ascii: boolean) => void): void {
  const length = text.length;
  let i = 0;
  while (i < length) {
    const first = text.charCodeAt(i);
    const codePoint = first >= 0xd800 && first < 0xdc00 ? text.codePointAt(i)! : first;
    const kind = kindOf(codePoint);
    const start = i;
    i += codePoint > 0xffff ? 2 : 1;
    if (kind === OTHER) continue;
    let ascii = codePoint < 0x80;
    while (i < length) {
      const unit = text.charCodeAt(i);
      const next = unit >= 0xd800 && unit < 0xdc00 ? text.codePointAt(i)! : unit;
      if (kindOf(next) === kind) {
        if (next >= 0x80) ascii = false;
        i += next > 0xffff ? 2 : 1;
      } else if (kind === WORD && next === APOSTROPHE && i + 1 < length && kindOf(text.charCodeAt(i + 1)) === WORD) i++;
      else break;
    }
    visit(text.slice(start, i), kind as TokenKind, start, ascii);
  }
}
