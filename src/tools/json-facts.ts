/**
 * Facts in JSON: tool-call arguments and tool results are mostly JSON objects whose keys already
 * say what each value is (`"reservation_id": "ZFA04Y"`), which is a better label than any pattern
 * could guess. Walks a parsed value and names each fact after its JSON key.
 */
import { parseJsonWithinDepth } from '../messages/json-limits.js';
import { factKey, textFactKey, textFacts } from './text-facts.js';
import type { FactCategory } from './types.js';

/** A fact found in JSON, in walk order. */
export interface JsonFact {
  category: FactCategory;
  value: string;
  /** The JSON key it stands under (`flight_number`), or undefined at the top level. */
  key: string | undefined;
  /** Where it sits; read with `jsonPath` (built only for the facts that are kept). */
  at: PathNode;
}

/** One step of a path, linked to its parent: building strings for every leaf would cost more. */
export interface PathNode {
  parent: PathNode | undefined;
  step: string | number;
}

/** Strings longer than this are prose, not values: they are scanned like free text. */
const MAX_VALUE_LENGTH = 120;
/** A string under an unknown key is kept as an `other` fact only when it is this short. */
const MAX_OTHER_LENGTH = 80;
/**
 * At most this many facts are read from one JSON value: a huge result (10k search hits) would
 * otherwise cost more than everything else, and the extractor keeps only a few per message.
 */
export const MAX_JSON_FACTS = 2000;

const NAME_KEY =
  /(?:^|_)(?:first|last|middle|full|given|family|sur|display|user|customer|passenger|contact)?_?name$/;
const ADDRESS_KEY = /address|street|city|zip|postal|postcode|province|state|country|region/;
const PHONE_KEY = /phone|mobile|tel|fax/;
const AMOUNT_KEY =
  /price|amount|cost|balance|total|fee|refund|paid|payment|charge|fare|salary|budget|spent|deposit|subtotal|tax/;
const ID_KEY =
  /(?:^|_)(?:id|ids|uuid|code|codes|number|no|ref|reference|key|sku|token|reservations?|orders?)$/;
const PATH_KEY = /(?:^|_)(?:path|file|filename|dir|directory|folder)$/;

const EMAIL = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
const URL = /^(?:https?:\/\/|www\.)\S+$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const OTHER_DATE = /^(?:\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{4}\/\d{1,2}\/\d{1,2})$/;
const TIME = /^(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:\s?[AaPp]\.?[Mm]\.?)?$/;
const AMOUNT =
  /^(?:[$€£¥₹] ?-?\d[\d,]*(?:\.\d+)?|-?\d[\d,]*(?:\.\d+)? ?(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|INR))$/;
const NUMERIC = /^-?\d[\d,]*(?:\.\d+)?$/;
const PERSON_NAME = /^\p{L}[\p{L}'’ .-]{0,60}$/u;
const CODE = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{2,}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function looksLikeId(value: string): boolean {
  if (!CODE.test(value)) return false;
  const letters = /[A-Za-z]/.test(value);
  const digits = /\d/.test(value);
  return (letters && digits) || /^[A-Z]{3,10}$/.test(value);
}

function isPath(value: string): boolean {
  if (!value.includes('/') && !value.includes('\\')) return false;
  if (/\s/.test(value)) return false;
  if (/^[A-Za-z]:\\/.test(value)) return true;
  if (!/[A-Za-z]/.test(value)) return false;
  if (/^(?:~|\.{1,2})?\//.test(value) && value.length > 1) return true;
  return /\.[A-Za-z0-9]{1,10}$/.test(value);
}

/** What a JSON key says about its values; computed once per distinct key. */
interface KeyKind {
  name: boolean;
  address: boolean;
  phone: boolean;
  amount: boolean;
  id: boolean;
  path: boolean;
}

const keyKinds = new Map<string, KeyKind>();

function keyKind(key: string): KeyKind {
  let kind = keyKinds.get(key);
  if (kind === undefined) {
    kind = {
      name: NAME_KEY.test(key),
      address: ADDRESS_KEY.test(key),
      phone: PHONE_KEY.test(key),
      amount: AMOUNT_KEY.test(key),
      id: ID_KEY.test(key),
      path: PATH_KEY.test(key),
    };
    if (keyKinds.size >= 10_000) keyKinds.clear();
    keyKinds.set(key, kind);
  }
  return kind;
}

/** The category of a JSON string under `key`, or 'text' when it is prose to scan, or null to skip. */
function classifyString(key: string, v: string): FactCategory | 'text' | null {
  if (v === '') return null;
  if (v.length > MAX_VALUE_LENGTH) return 'text';
  const kind = keyKind(key);
  const digit = /\d/.test(v);
  if (v.includes('@') && EMAIL.test(v)) return 'email';
  if (URL.test(v)) return 'url';
  if (digit) {
    if (ISO_DATE.test(v) || OTHER_DATE.test(v)) return 'date';
    if (TIME.test(v)) return 'time';
    if (AMOUNT.test(v)) return 'amount';
    if (kind.phone && v.replace(/\D/g, '').length >= 7) return 'phone';
  }
  if (kind.name && PERSON_NAME.test(v)) return 'name';
  if (kind.address) return 'address';
  if (isPath(v) || (kind.path && !/\s/.test(v))) return 'path';
  if (digit && NUMERIC.test(v)) {
    if (kind.amount) return 'amount';
    return v.replace(/\D/g, '').length >= 2 || v.includes('.') ? 'number' : null;
  }
  if (looksLikeId(v) || (kind.id && CODE.test(v))) return 'identifier';
  if (v.length <= MAX_OTHER_LENGTH) return 'other';
  return 'text';
}

function classifyNumber(key: string, value: number): FactCategory | null {
  if (!Number.isFinite(value)) return null;
  const kind = keyKind(key);
  if (kind.amount) return value === 0 ? null : 'amount';
  if (kind.id) return 'identifier';
  return Math.abs(value) >= 10 || !Number.isInteger(value) ? 'number' : null;
}

/** Generic keys read better with their parent's name: `payment.id` → `payment_id`. */
const GENERIC_KEYS = new Set(['id', 'name', 'value', 'type', 'code', 'number', 'key']);

/** `flights[1].flight_number` for a fact's `at`. */
export function jsonPath(node: PathNode | undefined): string {
  const steps: Array<string | number> = [];
  for (let n = node; n !== undefined; n = n.parent) steps.push(n.step);
  let out = '';
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    const step = steps[i] as string | number;
    out += typeof step === 'number' ? `[${step}]` : out === '' ? step : `.${step}`;
  }
  return out;
}

/**
 * The facts in a parsed JSON value, in walk order (object keys in their order, arrays in order),
 * at most `MAX_JSON_FACTS`. Each is named after the nearest object key (`reservations[2]` →
 * `reservations`); object keys that are themselves ids (`"certificate_8544743": {…}`) are facts
 * too. Booleans, nulls and one-digit numbers are left out; long strings are scanned as free text.
 */
export function jsonFacts(root: unknown): JsonFact[] {
  const out: JsonFact[] = [];
  const push = (category: FactCategory, value: string, key: string, at: PathNode): void => {
    out.push({ category, value, key: key === '' ? undefined : key, at });
  };
  const visit = (value: unknown, key: string, parentKey: string, at: PathNode | undefined): void => {
    if (out.length >= MAX_JSON_FACTS) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) visit(value[i], key, parentKey, { parent: at, step: i });
      return;
    }
    if (isRecord(value)) {
      for (const rawKey in value) {
        const node: PathNode = { parent: at, step: rawKey };
        // An id used as a key (`"certificate_8544743": {…}`), not a numbered field (`address2`).
        if (
          rawKey.length >= 5 &&
          looksLikeId(rawKey) &&
          /\d/.test(rawKey) &&
          !/^[a-z_]+\d{1,2}$/i.test(rawKey)
        ) {
          push('identifier', rawKey, key || 'id', node);
        }
        visit(value[rawKey], factKey(rawKey) || key, key, node);
      }
      return;
    }
    if (at === undefined) at = { parent: undefined, step: '$' };
    const name =
      GENERIC_KEYS.has(key) && parentKey !== '' && !/\d/.test(parentKey) ? `${parentKey}_${key}` : key;
    if (typeof value === 'number') {
      const category = classifyNumber(key, value);
      if (category) push(category, String(value), name, at);
      return;
    }
    if (typeof value !== 'string') return;
    const trimmed = value.trim();
    const category = classifyString(key, trimmed);
    if (category === null) return;
    if (category !== 'text') {
      push(category, trimmed, name, at);
      return;
    }
    for (const fact of textFacts(value, { limit: MAX_JSON_FACTS - out.length })) {
      push(fact.category, fact.value, textFactKey(value, fact) ?? name, at);
    }
  };
  visit(root, '', '', undefined);
  return out;
}

/**
 * The parsed JSON in `text` when the whole text is one JSON object or array, else undefined.
 * Checks the first character before parsing so prose costs nothing.
 */
export function parseJsonText(text: string): unknown {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 32) i += 1;
  const first = text.charCodeAt(i);
  if (first !== 123 && first !== 91) return undefined; // '{' or '['
  try {
    // Deeper than any walk here may go: read as prose (see json-limits.ts).
    return parseJsonWithinDepth(text);
  } catch {
    return undefined;
  }
}
