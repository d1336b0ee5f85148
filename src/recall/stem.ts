/**
 * English stemming after M. F. Porter, "An algorithm for suffix stripping" (1980), written from the
 * paper's rules: `researching`, `researched` and `researches` all become `research`, so a question
 * finds the turn whatever form the word takes there. Words that are not lowercase ASCII letters
 * (numbers, names in other scripts) are returned as they are.
 */

/** Whether `word[i]` is a consonant in Porter's sense: `y` after a consonant is a vowel. */
function isConsonant(word: string, i: number): boolean {
  switch (word.charCodeAt(i)) {
    case 97: // a
    case 101: // e
    case 105: // i
    case 111: // o
    case 117: // u
      return false;
    case 121: // y
      return i === 0 || !isConsonant(word, i - 1);
    default:
      return true;
  }
}

/** Porter's m: the number of vowel-consonant sequences in `word[0, end)`. */
function measure(word: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonant(word, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(word, i)) i++;
    if (i >= end) break;
    m++;
    while (i < end && isConsonant(word, i)) i++;
  }
  return m;
}

function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(word, i)) return true;
  return false;
}

/** The stem ends in a double consonant. */
function endsDouble(word: string, end: number): boolean {
  return end >= 2 && word[end - 1] === word[end - 2] && isConsonant(word, end - 1);
}

/** The stem ends consonant-vowel-consonant, the last not w, x or y (`hop`, not `how`). */
function endsCvc(word: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonant(word, end - 1) || isConsonant(word, end - 2) || !isConsonant(word, end - 3)) return false;
  const last = word[end - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first matching suffix whose stem has measure above `minM`; at most one rule fires. */
function applyRules(word: string, rules: readonly Rule[], minM: number): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue;
    const end = word.length - suffix.length;
    return measure(word, end) > minM ? word.slice(0, end) + replacement : word;
  }
  return word;
}

const STEP2: readonly Rule[] = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
];

const STEP3: readonly Rule[] = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
];

/** Longest first where one suffix ends another (`ement` before `ment` before `ent`). */
const STEP4 = [
  'al',
  'ance',
  'ence',
  'er',
  'ic',
  'able',
  'ible',
  'ant',
  'ement',
  'ment',
  'ent',
  'ion',
  'ou',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
] as const;

function step1a(w: string): string {
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ies')) return w.slice(0, -2);
  if (w.endsWith('ss')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

function step1b(w: string): string {
  if (w.endsWith('eed')) return measure(w, w.length - 3) > 0 ? w.slice(0, -1) : w;
  let stem: string;
  if (w.endsWith('ed') && hasVowel(w, w.length - 2)) stem = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w, w.length - 3)) stem = w.slice(0, -3);
  else return w;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  const last = stem[stem.length - 1];
  if (endsDouble(stem, stem.length) && last !== 'l' && last !== 's' && last !== 'z') return stem.slice(0, -1);
  if (measure(stem, stem.length) === 1 && endsCvc(stem, stem.length)) return `${stem}e`;
  return stem;
}

function step1c(w: string): string {
  return w.endsWith('y') && hasVowel(w, w.length - 1) ? `${w.slice(0, -1)}i` : w;
}

function step4(w: string): string {
  let best = '';
  for (const suffix of STEP4) if (w.endsWith(suffix) && suffix.length > best.length) best = suffix;
  if (best === '') return w;
  const end = w.length - best.length;
  if (measure(w, end) <= 1) return w;
  if (best === 'ion' && w[end - 1] !== 's' && w[end - 1] !== 't') return w;
  return w.slice(0, end);
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const m = measure(w, w.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(w, w.length - 1))) w = w.slice(0, -1);
  }
  if (w.endsWith('ll') && measure(w, w.length) > 1) w = w.slice(0, -1);
  return w;
}

const LOWER_ASCII = /^[a-z]+$/;

/** The Porter stem of a lowercase word; anything but lowercase ASCII letters is returned as given. */
export function stem(word: string): string {
  if (word.length <= 2 || !LOWER_ASCII.test(word)) return word;
  let w = step1a(word);
  w = step1b(w);
  w = step1c(w);
  w = applyRules(w, STEP2, 0);
  w = applyRules(w, STEP3, 0);
  w = step4(w);
  return step5(w);
}
