/**
 * Calendar dates written in text, as spans of days: "8 May, 2023", "May 8, 2023", "2023-05-08"
 * are one day; "May 2023" is that month; "in 2023" is that year. Recall uses them to favour turns
 * said near the date a question names.
 */

/** Days since 1970-01-01 (UTC), first and last included. */
export interface DaySpan {
  first: number;
  last: number;
}

const MONTHS: Record<string, number> = {
  jan: 0,
  january: 0,
  feb: 1,
  february: 1,
  mar: 2,
  march: 2,
  apr: 3,
  april: 3,
  may: 4,
  jun: 5,
  june: 5,
  jul: 6,
  july: 6,
  aug: 7,
  august: 7,
  sep: 8,
  sept: 8,
  september: 8,
  oct: 9,
  october: 9,
  nov: 10,
  november: 10,
  dec: 11,
  december: 11,
};

const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '((?:19|20)\\d\\d)';

/**
 * One pass, alternatives in priority order: ISO dates, day-month(-year), month-day(-year),
 * month-year, a lone year. Each names its groups by position (see `spansIn`).
 */
const DATES = new RegExp(
  [
    `\\b${YEAR}-(\\d\\d)-(\\d\\d)`,
    `\\b${DAY}\\s+(?:of\\s+)?${MONTH}\\.?(?:,?\\s+${YEAR})?\\b`,
    `\\b${MONTH}\\.?\\s+${DAY}\\b(?:,?\\s+${YEAR}\\b)?`,
    `\\b${MONTH}\\.?,?\\s+${YEAR}\\b`,
    `\\b${YEAR}\\b`,
  ].join('|'),
  'gi',
);

const DAY_MS = 86_400_000;

function dayNumber(year: number, month: number, day: number): number | undefined {
  if (month < 0 || month > 11 || day < 1 || day > 31) return undefined;
  const ms = Date.UTC(year, month, day);
  // Date.UTC rolls 31 April over to 1 May: such a date is not a date.
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return Math.floor(ms / DAY_MS);
}

function monthOf(name: string | undefined): number | undefined {
  return name === undefined ? undefined : MONTHS[name.toLowerCase()];
}

interface Found {
  span?: DaySpan;
  /** A day and month whose year the text leaves to another date ("between August 11 and August 15 2023"). */
  yearless?: { month: number; day: number };
}

function read(m: RegExpExecArray): Found {
  const g = (i: number) => m[i];
  if (g(1) !== undefined) {
    const d = dayNumber(Number(g(1)), Number(g(2)) - 1, Number(g(3)));
    return d === undefined ? {} : { span: { first: d, last: d } };
  }
  if (g(4) !== undefined) return dayMonth(Number(g(4)), monthOf(g(5)), g(6));
  if (g(7) !== undefined) return dayMonth(Number(g(8)), monthOf(g(7)), g(9));
  if (g(10) !== undefined) {
    const month = monthOf(g(10));
    const year = Number(g(11));
    if (month === undefined) return {};
    const first = dayNumber(year, month, 1) as number;
    const next = month === 11 ? dayNumber(year + 1, 0, 1) : dayNumber(year, month + 1, 1);
    return { span: { first, last: (next as number) - 1 } };
  }
  const year = Number(g(12));
  return {
    span: { first: dayNumber(year, 0, 1) as number, last: dayNumber(year, 11, 31) as number },
  };
}

function dayMonth(day: number, month: number | undefined, year: string | undefined): Found {
  if (month === undefined) return {};
  if (year === undefined) return day >= 1 && day <= 31 ? { yearless: { month, day } } : {};
  const d = dayNumber(Number(year), month, day);
  return d === undefined ? {} : { span: { first: d, last: d } };
}

/**
 * The dates `text` names, as day spans, in order. A day and month without a year take the year
 * of a dated day in the same text (the last one before it, else the first after), and are left
 * out when there is none.
 */
export function spansIn(text: string): DaySpan[] {
  if (!/\d/.test(text)) return [];
  const found: Found[] = [];
  for (const m of text.matchAll(DATES)) found.push(read(m));
  const years = found.map((f) => (f.span ? new Date(f.span.first * DAY_MS).getUTCFullYear() : undefined));
  const out: DaySpan[] = [];
  found.forEach((f, i) => {
    if (f.span) {
      out.push(f.span);
      return;
    }
    if (!f.yearless) return;
    const year =
      years
        .slice(0, i)
        .reverse()
        .find((y) => y !== undefined) ?? years.slice(i + 1).find((y) => y !== undefined);
    if (year === undefined) return;
    const d = dayNumber(year, f.yearless.month, f.yearless.day);
    if (d !== undefined) out.push({ first: d, last: d });
  });
  return out;
}

/** The day of an ISO 8601 timestamp, or undefined when it is not one. */
export function dayOfTimestamp(timestamp: string): number | undefined {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) ? Math.floor(ms / DAY_MS) : undefined;
}
