/**
 * Transcripts often carry who spoke and when in the text itself: `[1:56 pm on 8 May, 2023]
 * Caroline: Hey Mel!`, `[2024-03-01 10:02] bob: ...`, `Alice: ...`. Recall reads that prefix as the
 * turn's speaker and day (so a question naming a person or a date can favour their turns) and
 * searches the rest, so a speaker's name, repeated on every turn, does not drown the words that
 * say what the turn is about.
 */
import { type DaySpan, spansIn } from './day-spans.js';

/** What a turn's prefix says, and where its own words start. */
export interface TranscriptPrefix {
  /** The speaker's name as written, when the text names one. */
  speaker?: string;
  /** The bracketed stamp as written (`[1:56 pm on 8 May, 2023]`), when there is one. */
  stamp?: string;
  /** The day the bracketed stamp names, when it names one. */
  day?: DaySpan;
  /** Index in the text where the turn's own words start (0 without a prefix). */
  bodyStart: number;
}

/** A leading bracketed stamp of up to 64 characters holding a digit. */
const STAMP = /^\s*\[([^\]\n]{1,64})\]\s*/;
/**
 * A speaker: one to three capitalised words (or a handle) and a colon, then a space. At most 40
 * characters, so a sentence that happens to have a colon is not taken for a name.
 */
const SPEAKER = /^([\p{Lu}@][\p{L}\p{N}_.'-]{0,30}(?: [\p{Lu}][\p{L}\p{N}_.'-]{0,30}){0,2}):[ \t]/u;

/** Reads the speaker and day at the start of `text`. */
export function transcriptPrefix(text: string): TranscriptPrefix {
  const out: TranscriptPrefix = { bodyStart: 0 };
  const stamp = STAMP.exec(text);
  if (stamp && /\d/.test(stamp[1] as string)) {
    out.stamp = `[${stamp[1] as string}]`;
    const day = spansIn(stamp[1] as string)[0];
    if (day) out.day = day;
    out.bodyStart = stamp[0].length;
  }
  const speaker = SPEAKER.exec(text.slice(out.bodyStart, out.bodyStart + 48));
  if (speaker) {
    out.speaker = speaker[1] as string;
    out.bodyStart += speaker[0].length;
  }
  return out;
}
