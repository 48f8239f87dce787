// What must be equal, besides a similar embedding, for two prompts to share a
// cached answer: their numbers and how many negations they hold. An embedding
// hardly sees either ("convert 5 km" and "convert 6 km" are one word apart;
// "use recursion" and "don't use recursion" too), yet either changes the
// answer. The guard is compared for equality by the index
// (core/cache/index/cache-index.ts), so a changed number or an added
// negation is never a hit, however close the vectors.
//
// Numbers are kept in the order they appear: "10 divided by 2" is not
// "2 divided by 10". The price is that a paraphrase moving one of two numbers
// misses the cache, which costs a call, not a wrong answer. Negations are
// counted, not listed: "don't" and "do not", "never" and "not ever" are then
// the same, while adding or removing one changes the guard.
import { createHash } from "node:crypto";
import { foldAccents } from "./stop-words.ts";
import { CJK, forEachToken } from "./tokens.ts";

/** Longer guards (a long conversation full of numbers) are stored as a digest of themselves. */
const MAX_GUARD_LENGTH = 96;

/** Digits, with "." and "," inside; a minus sign only where it cannot be a hyphen or a range ("-5", not "COVID-19" or "3-5"). */
const NUMBER = /(?<![\p{L}\p{N}])[-\u2212](?=\p{Nd})\p{Nd}+(?:[.,]\p{Nd}+)*|\p{Nd}+(?:[.,]\p{Nd}+)*/gu;
/** "1 000" with a no-break or thin space (French) is one number. */
const GROUPING_SPACE = /(\p{Nd})[\u00a0\u202f\u2009](?=\p{Nd}{3}(?!\p{Nd}))/gu;
const APOSTROPHES = /[\u2018\u2019\u02bc`\u00b4]/g;
/** Chinese and Japanese numerals: "三", "十二", "两百", "二〇二四". */
const CJK_NUMERAL = /[〇零一二两兩三四五六七八九十百千万萬亿億]+/gu;

/**
 * Number words, accents folded. Left out: words that are also common words of
 * another language here ("one", "un", "uno": also articles; "once", "due",
 * "sei", "sept", "cent"), so that a prompt in one language does not gain a
 * number from a word of another. Digits are what prompts mostly use.
 */
const NUMBER_WORDS: ReadonlyMap<string, string> = new Map(
  (
    [
      ["two", 2], ["three", 3], ["four", 4], ["five", 5], ["six", 6], ["seven", 7], ["eight", 8], ["nine", 9], ["ten", 10], ["eleven", 11],
      ["twelve", 12], ["fifteen", 15], ["twenty", 20], ["thirty", 30], ["forty", 40], ["fifty", 50], ["hundred", 100], ["thousand", 1000],
      ["million", 1e6], ["billion", 1e9], ["dozen", 12],
      ["deux", 2], ["trois", 3], ["quatre", 4], ["cinq", 5], ["huit", 8], ["neuf", 9], ["dix", 10], ["onze", 11], ["douze", 12], ["vingt", 20], ["trente", 30], ["mille", 1000],
      ["zwei", 2], ["drei", 3], ["vier", 4], ["funf", 5], ["sechs", 6], ["sieben", 7], ["acht", 8], ["neun", 9], ["zehn", 10], ["zwolf", 12], ["zwanzig", 20], ["hundert", 100], ["tausend", 1000],
      ["dos", 2], ["tres", 3], ["cuatro", 4], ["cinco", 5], ["seis", 6], ["siete", 7], ["ocho", 8], ["nueve", 9], ["diez", 10], ["doce", 12], ["veinte", 20], ["cien", 100], ["mil", 1000],
      ["dois", 2], ["duas", 2], ["quatro", 4], ["sete", 7], ["oito", 8], ["nove", 9], ["dez", 10], ["doze", 12], ["vinte", 20], ["cem", 100],
      ["tre", 3], ["quattro", 4], ["cinque", 5], ["sette", 7], ["otto", 8], ["dieci", 10], ["dodici", 12], ["venti", 20], ["cento", 100],
      ["два", 2], ["две", 2], ["три", 3], ["четыре", 4], ["пять", 5], ["шесть", 6], ["семь", 7], ["восемь", 8], ["девять", 9], ["десять", 10], ["двадцать", 20], ["сто", 100], ["тысяча", 1000],
    ] as const
  ).map(([word, value]) => [word, String(value)]),
);

/** Negation words of English, French, German, Spanish, Portuguese, Italian and Russian, accents folded. */
const NEGATION_WORDS: ReadonlySet<string> = new Set([
  ..."not no never none nothing nobody nowhere neither nor without cannot nope".split(" "),
  ..."dont doesnt didnt isnt arent wasnt werent cant wont wouldnt shouldnt couldnt havent hasnt hadnt mustnt".split(" "),
  ..."ne pas jamais sans aucun aucune rien ni non nullement guere".split(" "),
  ..."nicht nie niemals kein keine keinen keinem keiner keines ohne nichts niemand weder nirgends".split(" "),
  ..."nunca jamas sin nada nadie ningun ninguno ninguna tampoco".split(" "),
  ..."nao sem ninguem nenhum nenhuma nem".split(" "),
  ..."mai senza niente nulla nessuno nessuna".split(" "),
  ..."не нет никогда ни без ничего никто нельзя нигде".split(" "),
]);
/** French and Italian elisions that negate: "n'est", "n'ho". */
const NEGATING_ELISION = "n'";

/** Chinese and Japanese negations, found anywhere in a run of those scripts. */
const CJK_NEGATIONS = ["不", "没", "沒", "别", "別", "无", "無", "未", "非", "勿", "莫", "ない", "ません", "なかっ", "ずに"];
/** Words that hold a negation's character without negating ("特别" is "special", "非常" "very", "未来" "future"). */
const CJK_NOT_NEGATIONS = [
  "不过", "不断", "不仅", "不管", "不同", "特别", "特別", "区别", "區別", "差别", "差別", "别人", "别的", "分别", "類別", "类别", "级别", "級別",
  "性别", "性別", "识别", "識別", "告别", "个别", "区別", "無論", "无论", "未来", "未來", "非常", "莫名",
];

/** The guard of a prompt: equal for two prompts only when their numbers (in order) and their count of negations are. */
export function promptGuard(text: string): string {
  const normalised = text.replace(GROUPING_SPACE, "$1").normalize("NFKC").toLowerCase().replace(APOSTROPHES, "'");
  // Found by three scans (digits, number words, Chinese and Japanese numerals), put back in text order.
  const numbers: { at: number; value: string }[] = [];
  for (const match of normalised.matchAll(NUMBER)) numbers.push({ at: match.index, value: canonicalNumber(match[0]) });
  let negations = 0;
  forEachToken(normalised, (token, kind, start, ascii) => {
    if (kind === CJK) {
      negations += occurrences(token, CJK_NEGATIONS) - occurrences(token, CJK_NOT_NEGATIONS);
      for (const numeral of token.matchAll(CJK_NUMERAL)) if (numeral[0] !== "一") numbers.push({ at: start + numeral.index, value: cjkNumber(numeral[0]) });
      return;
    }
    const word = ascii ? token : foldAccents(token);
    const number = NUMBER_WORDS.get(word);
    if (number !== undefined) numbers.push({ at: start, value: number });
    if (NEGATION_WORDS.has(word) || word.endsWith("n't") || word.startsWith(NEGATING_ELISION)) negations++;
  });
  numbers.sort((a, b) => a.at - b.at);
  const guard = `${numbers.map((number) => number.value).join(" ")}|${negations}`;
  return guard.length <= MAX_GUARD_LENGTH ? guard : "#" + createHash("sha256").update(guard).digest("base64url");
}

/**
 * "2,5" and "2.50" as 2.5, "1,000,000" and "1.000.000" as 1000000, "007" as 7.
 * "2,500" is 2500 (English grouping), but "2.500" stays "2.500": German writes
 * 2500 so, English 2.5, and the guard must not call either the other.
 * Versions and addresses ("3.11.2", "192.168.1.1") stay as written.
 */
export function canonicalNumber(written: string): string {
  const negative = written.startsWith("-") || written.startsWith("\u2212");
  const digits = negative ? written.slice(1) : written;
  const separators = digits.replace(/\p{Nd}/gu, "");
  const groups = digits.split(/[.,]/);
  let value: string;
  if (separators === "") value = trimInteger(digits);
  else if (separators.length === 1) {
    const [integer, fraction] = groups;
    if (fraction.length === 3 && separators === "," && integer !== "0" && /^\p{Nd}{1,3}$/u.test(integer)) value = trimInteger(integer + fraction);
    else if (fraction.length === 3 && separators === ".") value = `${trimInteger(integer)}.${fraction}`;
    else value = decimal(integer, fraction);
  } else {
    const last = separators[separators.length - 1];
    const grouping = separators.slice(0, -1);
    const allGrouped = groups.slice(1, -1).every((group) => group.length === 3) && /^\p{Nd}{1,3}$/u.test(groups[0]);
    if (allGrouped && new Set(separators).size === 1 && groups[groups.length - 1].length === 3) value = trimInteger(groups.join(""));
    else if (allGrouped && new Set(grouping).size === 1 && grouping[0] !== last) value = decimal(groups.slice(0, -1).join(""), groups[groups.length - 1]);
    else value = digits.replaceAll(",", ".");
  }
  return negative && /[1-9]/.test(value) ? `-${value}` : value;
}

function decimal(integer: string, fraction: string): string {
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? trimInteger(integer) : `${trimInteger(integer)}.${trimmed}`;
}

const trimInteger = (integer: string) => integer.replace(/^0+(?=\p{Nd})/u, "");

const CJK_DIGITS: Readonly<Record<string, number>> = { 〇: 0, 零: 0, 一: 1, 二: 2, 两: 2, 兩: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
const CJK_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };
const CJK_MYRIADS: Readonly<Record<string, number>> = { 万: 1e4, 萬: 1e4, 亿: 1e8, 億: 1e8 };

/** "十二" as 12, "两百" as 200, "三万五千" as 35000; digit by digit ("二〇二四") as 2024. */
function cjkNumber(numeral: string): string {
  if (![...numeral].some((character) => character in CJK_UNITS || character in CJK_MYRIADS)) {
    return trimInteger([...numeral].map((character) => CJK_DIGITS[character]).join(""));
  }
  let total = 0;
  let section = 0;
  let digit = 0;
  for (const character of numeral) {
    if (character in CJK_DIGITS) digit = CJK_DIGITS[character];
    else if (character in CJK_UNITS) {
      section += (digit || 1) * CJK_UNITS[character];
      digit = 0;
    } else {
      total += (section + digit || 1) * CJK_MYRIADS[character];
      section = 0;
      digit = 0;
    }
  }
  return String(total + section + digit);
}

function occurrences(text: string, needles: readonly string[]): number {
  let found = 0;
  for (const needle of needles) {
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) found++;
  }
  return found;
}
