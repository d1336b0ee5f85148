/**
 * Generated agent conversations for property tests, the benchmark and the demo.
 *
 * A conversation is first drawn as a small format-neutral *script* (turns, tool rounds, parallel
 * calls, flags, image sizes, huge-result lengths) by fast-check, so shrinking removes turns and
 * calls; then the script is rendered into OpenAI Chat Completions or Anthropic Messages. Bulky
 * text (tool results, huge logs) is filled in from a seeded generator, which keeps generation
 * cheap and lets `longSessionMessages` share the same content without fast-check.
 */
import fc from 'fast-check';
import type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  Message,
  MessageFormat,
  OpenAIContentPart,
  OpenAIMessage,
  OpenAIToolCall,
} from '../../src/messages/types.js';

// ---------------------------------------------------------------- public shapes

/** The per-message flags a test passes to `addMessage` beside each message. */
export interface MessageFlags {
  pinned?: boolean;
  critical?: boolean;
}

/** Which deliberate faults a `{ broken: true }` conversation carries. */
export interface Breakage {
  /** The last message is an assistant message whose tool calls have no results (a crash). */
  unfinishedTail: boolean;
  /** A tool result whose call is not in the message before it (an id never called, or an old one). */
  orphanResult: boolean;
  /** A message sits between a tool call and its results (what a hook does). */
  interleaved: boolean;
}

/** One generated conversation; `options[i]` belongs to `messages[i]`. */
export interface GeneratedConversation {
  format: MessageFormat;
  messages: Message[];
  options: MessageFlags[];
  /** The facts (paths, ids, numbers, dates, emails) written into user and assistant text. */
  facts: string[];
  /** True when some tool call id is used by two different tool-call messages. */
  reusesIds: boolean;
  /** What was broken on purpose; all false for a clean conversation. */
  breakage: Breakage;
}

/** Options of `conversationArb`. */
export interface ConversationArbOptions {
  /** Fixed format; both are drawn when absent. */
  format?: MessageFormat;
  /** At least 1 (default 1). */
  minTurns?: number;
  /** Default 5, which keeps conversations at about 60 messages at most. */
  maxTurns?: number;
  /** Tool results of 10k–200k characters now and then (default false: they slow every property). */
  huge?: boolean;
  /** Images in user messages and screenshot results (default true: they are cheap). */
  images?: boolean;
  /** Add at least one of the faults in `Breakage` (default false). */
  broken?: boolean;
}

// ---------------------------------------------------------------- seeded randomness

/** A small seeded generator (a 32-bit mixing step in the splitmix family), reproducible everywhere. */
export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

/** Why not `Math.random`: the benchmark, the demo and failing tests must replay the same session. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (probability) => next() < probability,
  };
}

// ---------------------------------------------------------------- word lists

const WORDS = (
  'parse date token budget cache request window summary retry offset ' +
  'buffer stream record schema index worker queue deploy config locale ' +
  'timezone payload session invoice export import handler router metric render ' +
  'flush commit rollback snapshot lease shard replica cursor batch encoder'
).split(' ');
const DIRS = ['src', 'src/lib', 'src/api', 'src/jobs', 'test', 'packages/core/src', 'scripts'] as const;
const EXTENSIONS = ['ts', 'ts', 'ts', 'tsx', 'json', 'py', 'md'] as const;
const NAMES = ['ana', 'bo', 'chen', 'dara', 'emil', 'farah', 'gus', 'hana', 'ivo', 'jun'] as const;
const DOMAINS = ['example.com', 'acme.io', 'corp.example.org'] as const;
const ID_PREFIXES = ['usr', 'ord', 'req', 'inv', 'job'] as const;
const LEVELS = ['INFO', 'DEBUG', 'WARN', 'ERROR', 'TRACE'] as const;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// ---------------------------------------------------------------- facts

/** The five kinds of fact a summary must not lose. */
export type FactKind = 'path' | 'id' | 'number' | 'date' | 'email';

/** A full set of facts from which a sentence template takes what it needs. */
export interface FactSet {
  path: string;
  id: string;
  number: string;
  date: string;
  email: string;
}

function pathFact(dir: number, word: number, ext: number): string {
  return `${DIRS[dir % DIRS.length]}/${WORDS[word % WORDS.length]}.${EXTENSIONS[ext % EXTENSIONS.length]}`;
}

function idFact(prefix: number, value: number): string {
  return `${ID_PREFIXES[prefix % ID_PREFIXES.length]}_${value.toString(16).padStart(4, '0')}`;
}

function dateFact(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function emailFact(name: number, domain: number, suffix: number): string {
  return `${NAMES[name % NAMES.length]}.${suffix}@${DOMAINS[domain % DOMAINS.length]}`;
}

function randomFactSet(random: SeededRandom): FactSet {
  return {
    path: pathFact(random.int(0, 99), random.int(0, 99), random.int(0, 99)),
    id: idFact(random.int(0, 9), random.int(0, 0xffff)),
    number: String(random.int(10, 99_999)),
    date: dateFact(random.int(2019, 2026), random.int(1, 12), random.int(1, 28)),
    email: emailFact(random.int(0, 99), random.int(0, 9), random.int(1, 999)),
  };
}

/** Facts as fast-check values, so a failing property prints the fact that was lost. */
export const factSetArb: fc.Arbitrary<FactSet> = fc.record({
  path: fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map(([d, w, e]) => pathFact(d, w, e)),
  id: fc.tuple(fc.nat(9), fc.nat(0xffff)).map(([p, v]) => idFact(p, v)),
  number: fc.integer({ min: 10, max: 99_999 }).map(String),
  date: fc
    .tuple(
      fc.integer({ min: 2019, max: 2026 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 28 }),
    )
    .map(([y, m, d]) => dateFact(y, m, d)),
  email: fc
    .tuple(fc.nat(99), fc.nat(9), fc.integer({ min: 1, max: 999 }))
    .map(([n, d, s]) => emailFact(n, d, s)),
});

interface Template {
  uses: readonly FactKind[];
  write: (f: FactSet) => string;
}

const USER_TEMPLATES: readonly Template[] = [
  {
    uses: ['path', 'date', 'number'],
    write: (f) => `Fix the failing test in ${f.path}; it started on ${f.date} after ${f.number} runs.`,
  },
  {
    uses: ['id', 'email', 'path'],
    write: (f) => `User ${f.id} (${f.email}) says the export in ${f.path} is broken. Can you look?`,
  },
  {
    uses: ['id', 'number', 'date'],
    write: (f) => `Why was order ${f.id} charged ${f.number} USD on ${f.date}? Check the ledger first.`,
  },
  { uses: ['email', 'path'], write: (f) => `Please email ${f.email} once ${f.path} passes lint and tests.` },
  { uses: ['path', 'date'], write: (f) => `Summarize what changed in ${f.path} since ${f.date}.` },
  { uses: [], write: () => 'Thanks, that looks right. Go ahead with the next step.' },
  { uses: [], write: () => 'Can you run the whole suite again and tell me what still fails?' },
];

const ANSWER_TEMPLATES: readonly Template[] = [
  {
    uses: ['path', 'date', 'number'],
    write: (f) => `I updated ${f.path} so the parser accepts ${f.date}; all ${f.number} tests pass now.`,
  },
  { uses: ['id', 'email'], write: (f) => `Done. Record ${f.id} now points to ${f.email}.` },
  {
    uses: ['path', 'number'],
    write: (f) => `The failure came from ${f.path}: line ${f.number} compared dates in local time.`,
  },
  {
    uses: ['id', 'date'],
    write: (f) => `Refund for ${f.id} is scheduled for ${f.date}. I left a note on the ticket.`,
  },
  { uses: [], write: () => 'Nothing else needs to change; the suite is green.' },
];

/** A sentence with its facts listed, so a test can check each survives compaction. */
export interface FactText {
  text: string;
  facts: string[];
}

function writeFactText(
  templates: readonly Template[],
  index: number,
  facts: FactSet,
  filler: number,
): FactText {
  const template = templates[index % templates.length] as Template;
  const extra = filler > 0 ? ` ${fillerWords(filler, index + filler)}` : '';
  return { text: template.write(facts) + extra, facts: template.uses.map((kind) => facts[kind]) };
}

function fillerWords(count: number, seed: number): string {
  const words: string[] = [];
  for (let i = 0; i < count; i += 1) words.push(WORDS[(seed * 7 + i * 13) % WORDS.length] as string);
  return `Context: ${words.join(' ')}.`;
}

function factTextArb(templates: readonly Template[]): fc.Arbitrary<FactText> {
  return fc
    .tuple(
      fc.nat(templates.length - 1),
      factSetArb,
      fc.oneof(fc.constant(0), fc.integer({ min: 5, max: 80 })),
    )
    .map(([index, facts, filler]) => writeFactText(templates, index, facts, filler));
}

/** A user request that mentions paths, ids, numbers, dates or emails (or none, now and then). */
export const userTextArb: fc.Arbitrary<FactText> = factTextArb(USER_TEMPLATES);

/** An assistant's final answer to a turn, with the facts it states. */
export const answerTextArb: fc.Arbitrary<FactText> = factTextArb(ANSWER_TEMPLATES);

// ---------------------------------------------------------------- images

/** Width and height of a generated image; both matter to providers' image token formulas. */
export interface ImageSpec {
  width: number;
  height: number;
  /** Inline base64 PNG, or an http(s) URL the provider fetches. */
  source: 'base64' | 'url';
  /** Extra bytes after the header, so base64 length says nothing about the dimensions. */
  padding: number;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * The bytes of a PNG whose header declares `width` × `height`: the real signature and IHDR chunk
 * (with correct CRCs), then an IDAT chunk of `padding` filler bytes and IEND. It is not a decodable
 * picture, but every reader of PNG dimensions (and every provider's cost formula) sees the size.
 */
export function pngBytes(width: number, height: number, padding = 32): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // colour type RGBA
  const filler = Buffer.alloc(padding);
  for (let i = 0; i < padding; i += 1) filler[i] = (i * 151 + width * 7 + height * 13) & 0xff;
  return Buffer.concat([
    signature,
    pngChunk('IHDR', header),
    pngChunk('IDAT', filler),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `pngBytes` as base64, the form both providers take inline. */
export function pngBase64(width: number, height: number, padding = 32): string {
  return pngBytes(width, height, padding).toString('base64');
}

/** Sizes from icons to 4k screenshots, with the common screen sizes drawn more often. */
export const imageSpecArb: fc.Arbitrary<ImageSpec> = fc.record({
  width: fc.oneof(fc.constantFrom(1280, 1920, 800, 512), fc.integer({ min: 1, max: 4096 })),
  height: fc.oneof(fc.constantFrom(720, 1080, 600, 512), fc.integer({ min: 1, max: 4096 })),
  source: fc.oneof({ arbitrary: fc.constant<'base64'>('base64'), weight: 3 }, fc.constant<'url'>('url')),
  padding: fc.integer({ min: 0, max: 2048 }),
});

function imageUrl(image: ImageSpec): string {
  return `https://images.example.com/shots/${image.width}x${image.height}/frame.png`;
}

function openaiImagePart(image: ImageSpec): OpenAIContentPart {
  const url =
    image.source === 'base64'
      ? `data:image/png;base64,${pngBase64(image.width, image.height, image.padding)}`
      : imageUrl(image);
  return { type: 'image_url', image_url: { url } };
}

function anthropicImageBlock(image: ImageSpec): AnthropicImageBlock {
  return image.source === 'base64'
    ? {
        type: 'image',
        source: {
          type: 'base64',
          media_type: 'image/png',
          data: pngBase64(image.width, image.height, image.padding),
        },
      }
    : { type: 'image', source: { type: 'url', url: imageUrl(image) } };
}

// ---------------------------------------------------------------- huge text

/**
 * Exactly `length` characters of log-like text. Numbers, hex ids and paths vary line by line so a
 * BPE tokenizer cannot fold it into a few long tokens: the token count stays near what a real log
 * of that size costs.
 */
export function hugeText(length: number, seed: number): string {
  const random = seededRandom(seed);
  const lines: string[] = [];
  let size = 0;
  let line = 1;
  while (size < length) {
    const text =
      `${String(line).padStart(6, '0')} ${random.pick(LEVELS)} ` +
      `${pathFact(random.int(0, 99), random.int(0, 99), 0)}:${random.int(1, 2000)} ` +
      `${random.pick(WORDS)} ${random.pick(WORDS)} ${random.pick(WORDS)} ` +
      `id=${random.int(0, 0xffffff).toString(16)} took ${random.int(1, 9999)}ms`;
    lines.push(text);
    size += text.length + 1;
    line += 1;
  }
  return lines.join('\n').slice(0, length);
}

/** A huge text of 10k–200k characters; only length and seed are drawn, so shrinking is cheap. */
export const hugeTextArb: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 10_000, max: 200_000 }), fc.nat())
  .map(([length, seed]) => hugeText(length, seed));

/**
 * How many words a result has when it is huge: 0 (not huge) four times in five, else
 * 2,000–20,000; always 0 when `on` is false. For generators that write results word by word.
 */
export function hugeWordsArb(on: boolean): fc.Arbitrary<number> {
  if (!on) return fc.constant(0);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 20_000 }) },
  );
}

// ---------------------------------------------------------------- tools

interface ToolSpec {
  name: string;
  args: (random: SeededRandom) => Record<string, unknown>;
  result: (random: SeededRandom, args: Record<string, unknown>) => string;
}

const TOOLS: readonly ToolSpec[] = [
  {
    name: 'read_file',
    args: (r) => ({ path: pathFact(r.int(0, 99), r.int(0, 99), r.int(0, 99)) }),
    result: (r) => {
      const lines: string[] = [];
      const count = r.int(3, 30);
      for (let i = 0; i < count; i += 1) {
        const word = r.pick(WORDS);
        lines.push(
          `export function ${word}${i}(input: string): number { return input.length * ${r.int(2, 999)}; }`,
        );
      }
      return lines.join('\n');
    },
  },
  {
    name: 'grep',
    args: (r) => ({ pattern: r.pick(WORDS), path: r.pick(DIRS) }),
    result: (r, args) => {
      const lines: string[] = [];
      const count = r.int(1, 15);
      for (let i = 0; i < count; i += 1) {
        const path = pathFact(r.int(0, 99), r.int(0, 99), 0);
        lines.push(
          `${path}:${r.int(1, 500)}:  const ${String(args.pattern)} = ${r.pick(WORDS)}(${r.int(0, 99)});`,
        );
      }
      return lines.join('\n');
    },
  },
  {
    name: 'run_tests',
    args: (r) => ({ pattern: `${r.pick(WORDS)}.test.ts` }),
    result: (r, args) => {
      const failed = r.int(0, 4);
      const date = dateFact(r.int(2019, 2026), r.int(1, 12), r.int(1, 28));
      const head =
        failed > 0 ? `FAIL ${String(args.pattern)} > parses ${date}\n  expected ${r.int(1, 31)}` : 'PASS';
      return `${head}\nTests: ${failed} failed, ${r.int(5, 300)} passed (${r.int(100, 9000)}ms)`;
    },
  },
  {
    name: 'get_user',
    args: (r) => ({ user_id: idFact(0, r.int(0, 0xffff)) }),
    result: (r, args) =>
      JSON.stringify({
        id: args.user_id,
        email: emailFact(r.int(0, 99), r.int(0, 9), r.int(1, 999)),
        created: dateFact(r.int(2019, 2026), r.int(1, 12), r.int(1, 28)),
        orders: r.int(0, 40),
        plan: r.pick(['free', 'team', 'enterprise']),
      }),
  },
  {
    name: 'list_dir',
    args: (r) => ({ path: r.pick(DIRS) }),
    result: (r) => {
      const names: string[] = [];
      const count = r.int(1, 20);
      for (let i = 0; i < count; i += 1) names.push(`${r.pick(WORDS)}.${r.pick(EXTENSIONS)}`);
      return names.join('\n');
    },
  },
  {
    name: 'fetch_url',
    args: (r) => ({ url: `https://docs.example.com/${r.pick(WORDS)}/${r.int(1, 99)}` }),
    result: (r) => `<h1>${r.pick(WORDS)}</h1><p>${fillerWords(r.int(10, 60), r.int(0, 99))}</p>`,
  },
];

const SCREENSHOT_TOOL = 'screenshot';

function errorText(random: SeededRandom): string {
  const path = pathFact(random.int(0, 99), random.int(0, 99), 0);
  return `Error: ENOENT: no such file or directory, open '${path}'`;
}

// ---------------------------------------------------------------- the script

type Flag = 'none' | 'pinned' | 'critical' | 'both';

interface CallScript {
  tool: number;
  seed: number;
  /** 0, or the length of a huge result. */
  huge: number;
  error: boolean;
  /** A screenshot call; its result is an image in Anthropic and a text note in OpenAI. */
  screenshot: ImageSpec | null;
}

/** How a round looks, apart from its calls. */
interface RoundStyle {
  /** Results in a shuffled order (by these keys) instead of call order. */
  shuffled: boolean;
  shuffleKeys: number[];
  preface: string | null;
  thinking: boolean;
  /** Anthropic: a text block after the results in the same user message. */
  trailingText: string | null;
}

interface RoundScript extends RoundStyle {
  calls: CallScript[];
  /** Where `call_N` numbering starts in this round when ids are reused. */
  idOffset: number;
}

const PLAIN_ROUND: RoundStyle = {
  shuffled: false,
  shuffleKeys: [],
  preface: null,
  thinking: false,
  trailingText: null,
};

interface TurnScript {
  midSystem: string | null;
  midSystemFlag: Flag;
  user: FactText;
  userFlag: Flag;
  userAsParts: boolean;
  image: ImageSpec | null;
  rounds: RoundScript[];
  answer: FactText;
  answerFlag: Flag;
  answerThinking: boolean;
}

interface ConversationScript {
  format: MessageFormat;
  system: { text: string; flag: Flag; developer: boolean; asParts: boolean } | null;
  reuseIds: boolean;
  idSeed: number;
  turns: TurnScript[];
  /** Bit 1: unfinished tail, bit 2: orphan result, bit 4: interleaved message; 0 when clean. */
  breakMask: number;
  breakAt: number;
}

const flagArb: fc.Arbitrary<Flag> = fc.oneof(
  { arbitrary: fc.constant<Flag>('none'), weight: 16 },
  { arbitrary: fc.constant<Flag>('pinned'), weight: 1 },
  { arbitrary: fc.constant<Flag>('critical'), weight: 1 },
  { arbitrary: fc.constant<Flag>('both'), weight: 1 },
);

function rarely<T>(arb: fc.Arbitrary<T>, none: T, weight = 4): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constant(none), weight }, { arbitrary: arb, weight: 1 });
}

const SYSTEM_PROMPTS = [
  'You are a careful coding agent. Run the tests before you say a change works.',
  'You are a support agent for Acme. Never share one customer’s data with another.',
  'You are a data assistant. Quote exact ids, paths and amounts from tool results.',
] as const;

const MID_SYSTEM = [
  'Reminder: the repository is read-only until the user confirms.',
  'The user switched to the staging environment.',
  'Tool budget: at most 20 more calls in this session.',
] as const;

function callArb(huge: boolean, images: boolean, format: MessageFormat): fc.Arbitrary<CallScript> {
  return fc.record({
    tool: fc.nat(TOOLS.length - 1),
    seed: fc.nat(),
    huge: huge ? rarely(fc.integer({ min: 10_000, max: 200_000 }), 0, 6) : fc.constant(0),
    error: rarely(fc.constant(true), false, 9),
    screenshot: images && format === 'anthropic' ? rarely(imageSpecArb, null, 8) : fc.constant(null),
  });
}

function roundArb(huge: boolean, images: boolean, format: MessageFormat): fc.Arbitrary<RoundScript> {
  return fc.record({
    calls: fc.oneof(
      { arbitrary: fc.array(callArb(huge, images, format), { minLength: 1, maxLength: 1 }), weight: 3 },
      { arbitrary: fc.array(callArb(huge, images, format), { minLength: 2, maxLength: 4 }), weight: 2 },
    ),
    shuffled: rarely(fc.constant(true), false, 2),
    shuffleKeys: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    preface: rarely(
      fc.constantFrom('Let me check.', 'I will look at the files first.', 'Running the tests now.'),
      null,
      2,
    ),
    thinking: format === 'anthropic' ? rarely(fc.constant(true), false, 2) : fc.constant(false),
    trailingText:
      format === 'anthropic'
        ? rarely(fc.constantFrom('Also, keep the old behaviour behind a flag.', 'Hurry please.'), null, 6)
        : fc.constant(null),
    idOffset: fc.nat(3),
  });
}

function turnArb(huge: boolean, images: boolean, format: MessageFormat): fc.Arbitrary<TurnScript> {
  return fc.record({
    midSystem: format === 'openai' ? rarely(fc.constantFrom(...MID_SYSTEM), null, 10) : fc.constant(null),
    midSystemFlag: flagArb,
    user: userTextArb,
    userFlag: flagArb,
    userAsParts: rarely(fc.constant(true), false, 3),
    image: images ? rarely(imageSpecArb, null, 5) : fc.constant(null),
    rounds: fc.oneof(
      { arbitrary: fc.constant<RoundScript[]>([]), weight: 2 },
      { arbitrary: fc.array(roundArb(huge, images, format), { minLength: 1, maxLength: 1 }), weight: 3 },
      { arbitrary: fc.array(roundArb(huge, images, format), { minLength: 2, maxLength: 2 }), weight: 1 },
    ),
    answer: answerTextArb,
    answerFlag: flagArb,
    answerThinking: format === 'anthropic' ? rarely(fc.constant(true), false, 5) : fc.constant(false),
  });
}

function scriptArb(format: MessageFormat, opts: Required<Omit<ConversationArbOptions, 'format'>>) {
  return fc.record({
    format: fc.constant(format),
    system: fc.option(
      fc.record({
        text: fc.constantFrom(...SYSTEM_PROMPTS),
        flag: flagArb,
        developer: format === 'openai' ? rarely(fc.constant(true), false, 5) : fc.constant(false),
        asParts: rarely(fc.constant(true), false, 4),
      }),
      { freq: 4 },
    ),
    reuseIds: rarely(fc.constant(true), false, 2),
    idSeed: fc.nat(),
    turns: fc.array(turnArb(opts.huge, opts.images, format), {
      minLength: opts.minTurns,
      maxLength: opts.maxTurns,
    }),
    breakMask: opts.broken ? fc.integer({ min: 1, max: 7 }) : fc.constant(0),
    breakAt: fc.nat(),
  }) satisfies fc.Arbitrary<ConversationScript>;
}

/**
 * Realistic agent conversations in one or both formats: an optional system prompt, turns of user
 * text → tool rounds (1–4 parallel calls and their results) → an answer, with reused ids, huge
 * results, images, thinking blocks, facts in the text and a few pinned or critical messages.
 * Clean unless `broken` is set; then `breakage` says which faults were added.
 */
export function conversationArb(opts: ConversationArbOptions = {}): fc.Arbitrary<GeneratedConversation> {
  const minTurns = Math.max(1, opts.minTurns ?? 1);
  const settings = {
    minTurns,
    maxTurns: Math.max(minTurns, opts.maxTurns ?? 5),
    huge: opts.huge ?? false,
    images: opts.images ?? true,
    broken: opts.broken ?? false,
  };
  const formats: MessageFormat[] = opts.format ? [opts.format] : ['openai', 'anthropic'];
  const scripts = formats.map((format) => scriptArb(format, settings));
  const script =
    scripts.length === 1 ? (scripts[0] as fc.Arbitrary<ConversationScript>) : fc.oneof(...scripts);
  return script.map(renderScript);
}

// ---------------------------------------------------------------- rendering

function flagOptions(flag: Flag): MessageFlags {
  switch (flag) {
    case 'pinned':
      return { pinned: true };
    case 'critical':
      return { critical: true };
    case 'both':
      return { pinned: true, critical: true };
    default:
      return {};
  }
}

function randomId(random: SeededRandom, length: number): string {
  let id = '';
  for (let i = 0; i < length; i += 1) id += BASE62[random.int(0, 61)];
  return id;
}

/** Ids for one tool round: fresh unique ones, or `call_1`…`call_4` numbering that repeats across rounds. */
class IdMaker {
  private readonly random: SeededRandom;
  private counter = 0;
  private readonly seen = new Set<string>();
  reused = false;

  constructor(
    private readonly format: MessageFormat,
    seed: number,
  ) {
    this.random = seededRandom(seed);
  }

  round(count: number, reuse: boolean, offset: number): string[] {
    const prefix = this.format === 'openai' ? 'call_' : 'toolu_';
    const ids: string[] = [];
    for (let j = 0; j < count; j += 1) {
      this.counter += 1;
      const id = reuse
        ? `${prefix}${((offset + j) % 4) + 1}`
        : `${prefix}${randomId(this.random, 20)}${this.counter}`;
      ids.push(id);
    }
    for (const id of ids) {
      if (this.seen.has(id)) this.reused = true;
    }
    for (const id of ids) this.seen.add(id);
    return ids;
  }

  /** An id that is surely not called anywhere in the conversation. */
  orphan(): string {
    return this.format === 'openai' ? 'call_orphan_0' : 'toolu_orphan_0';
  }

  /** Some id already used, so an orphan that pairs by id alone would look answered. */
  anyUsed(): string | undefined {
    return this.seen.values().next().value;
  }
}

interface Entry {
  message: Message;
  flags: MessageFlags;
}

interface RenderedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  text: string;
  error: boolean;
  screenshot: ImageSpec | null;
}

function renderCall(call: CallScript, id: string): RenderedCall {
  const random = seededRandom(call.seed);
  if (call.screenshot !== null) {
    const { width, height } = call.screenshot;
    return {
      id,
      name: SCREENSHOT_TOOL,
      args: { full_page: random.chance(0.5) },
      text: `Screenshot saved to /tmp/shot-${random.int(1, 999)}.png (${width}x${height}).`,
      error: false,
      screenshot: call.screenshot,
    };
  }
  const tool = TOOLS[call.tool % TOOLS.length] as ToolSpec;
  const args = tool.args(random);
  const text = call.error
    ? errorText(random)
    : call.huge > 0
      ? hugeText(call.huge, call.seed)
      : tool.result(random, args);
  return { id, name: tool.name, args, text, error: call.error, screenshot: null };
}

function resultOrder(count: number, style: RoundStyle): number[] {
  const order = Array.from({ length: count }, (_, j) => j);
  if (!style.shuffled) return order;
  return order.sort((a, b) => (style.shuffleKeys[a] ?? 0) - (style.shuffleKeys[b] ?? 0) || a - b);
}

function thinkingBlock(seed: number): AnthropicContentBlock {
  const random = seededRandom(seed);
  const path = pathFact(random.int(0, 99), random.int(0, 99), 0);
  return {
    type: 'thinking',
    thinking: `The user wants ${random.pick(WORDS)} handled. First I check ${path}.`,
    signature: `Eq${randomId(random, 60)}==`,
  };
}

function openaiToolCall(call: RenderedCall): OpenAIToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  };
}

function anthropicToolResult(call: RenderedCall): AnthropicToolResultBlock {
  if (call.screenshot !== null) {
    return {
      type: 'tool_result',
      tool_use_id: call.id,
      content: [anthropicImageBlock(call.screenshot), { type: 'text', text: call.text }],
    };
  }
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: call.id, content: call.text };
  if (call.error) block.is_error = true;
  return block;
}

/** The assistant message that makes a round's calls, in either format. */
function callMessage(format: MessageFormat, calls: RenderedCall[], round: RoundStyle, seed: number): Message {
  if (format === 'openai') {
    return { role: 'assistant', content: round.preface, tool_calls: calls.map(openaiToolCall) };
  }
  const blocks: AnthropicContentBlock[] = [];
  if (round.thinking) blocks.push(thinkingBlock(seed));
  if (round.preface !== null) blocks.push({ type: 'text', text: round.preface });
  for (const call of calls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
  return { role: 'assistant', content: blocks };
}

/** The messages that carry a round's results, in either format. */
function resultMessages(format: MessageFormat, calls: RenderedCall[], round: RoundStyle): Message[] {
  const order = resultOrder(calls.length, round);
  if (format === 'openai') {
    return order.map((j): OpenAIMessage => {
      const call = calls[j] as RenderedCall;
      return { role: 'tool', tool_call_id: call.id, content: call.text };
    });
  }
  const blocks: AnthropicContentBlock[] = order.map((j) => anthropicToolResult(calls[j] as RenderedCall));
  if (round.trailingText !== null) blocks.push({ type: 'text', text: round.trailingText });
  return [{ role: 'user', content: blocks }];
}

function userMessage(
  format: MessageFormat,
  text: string,
  image: ImageSpec | null,
  asParts: boolean,
): Message {
  if (image === null && !asParts) return { role: 'user', content: text };
  if (format === 'openai') {
    const parts: OpenAIContentPart[] = [{ type: 'text', text }];
    if (image !== null) parts.push(openaiImagePart(image));
    return { role: 'user', content: parts };
  }
  const blocks: AnthropicContentBlock[] = [];
  if (image !== null) blocks.push(anthropicImageBlock(image));
  blocks.push({ type: 'text', text });
  return { role: 'user', content: blocks };
}

function answerMessage(format: MessageFormat, turn: TurnScript, seed: number): Message {
  if (format === 'openai' || !turn.answerThinking) return { role: 'assistant', content: turn.answer.text };
  return { role: 'assistant', content: [thinkingBlock(seed), { type: 'text', text: turn.answer.text }] };
}

function systemMessage(script: ConversationScript): Message | null {
  const system = script.system;
  if (system === null) return null;
  const content: string | AnthropicTextBlock[] = system.asParts
    ? [{ type: 'text', text: system.text }]
    : system.text;
  if (script.format === 'openai') return { role: system.developer ? 'developer' : 'system', content };
  return { role: 'system', content };
}

function orphanMessage(format: MessageFormat, id: string): Message {
  const text = 'late result from a cancelled call';
  if (format === 'openai') return { role: 'tool', tool_call_id: id, content: text };
  return { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: text }] };
}

function hookMessage(format: MessageFormat): Message {
  const text = '[hook] file watcher: 3 files changed on disk.';
  return format === 'openai'
    ? { role: 'user', content: text }
    : { role: 'user', content: [{ type: 'text', text }] };
}

function renderScript(script: ConversationScript): GeneratedConversation {
  const { format } = script;
  const ids = new IdMaker(format, script.idSeed);
  const entries: Entry[] = [];
  const facts: string[] = [];
  const breakage: Breakage = { unfinishedTail: false, orphanResult: false, interleaved: false };
  const system = systemMessage(script);
  if (system !== null) entries.push({ message: system, flags: flagOptions(script.system?.flag ?? 'none') });

  const wantTail = (script.breakMask & 1) !== 0;
  const wantOrphan = (script.breakMask & 2) !== 0;
  const wantInterleave = (script.breakMask & 4) !== 0;
  const orphanTurn = script.breakAt % script.turns.length;
  const roundCount = script.turns.reduce((sum, turn) => sum + turn.rounds.length, 0);
  const interleaveRound = roundCount > 0 ? script.breakAt % roundCount : -1;
  let roundIndex = 0;

  script.turns.forEach((turn, t) => {
    const isLast = t === script.turns.length - 1;
    if (wantOrphan && t === orphanTurn) {
      const id = script.breakAt % 2 === 0 ? ids.orphan() : (ids.anyUsed() ?? ids.orphan());
      entries.push({ message: orphanMessage(format, id), flags: {} });
      breakage.orphanResult = true;
    }
    if (turn.midSystem !== null && t > 0) {
      entries.push({
        message: { role: 'system', content: turn.midSystem },
        flags: flagOptions(turn.midSystemFlag),
      });
    }
    entries.push({
      message: userMessage(format, turn.user.text, turn.image, turn.userAsParts),
      flags: flagOptions(turn.userFlag),
    });
    facts.push(...turn.user.facts);
    turn.rounds.forEach((round, r) => {
      const callIds = ids.round(round.calls.length, script.reuseIds, round.idOffset);
      const calls = round.calls.map((call, j) => renderCall(call, callIds[j] as string));
      entries.push({ message: callMessage(format, calls, round, script.idSeed + t * 31 + r), flags: {} });
      if (wantInterleave && roundIndex === interleaveRound) {
        entries.push({ message: hookMessage(format), flags: {} });
        breakage.interleaved = true;
      }
      roundIndex += 1;
      for (const message of resultMessages(format, calls, round)) entries.push({ message, flags: {} });
    });
    if (isLast && wantTail) {
      const [id] = ids.round(1, script.reuseIds, turn.rounds[0]?.idOffset ?? 0);
      const call = renderCall(
        { tool: t, seed: script.idSeed, huge: 0, error: false, screenshot: null },
        id as string,
      );
      entries.push({
        message: callMessage(format, [call], turn.rounds[0] ?? PLAIN_ROUND, script.idSeed),
        flags: {},
      });
      breakage.unfinishedTail = true;
      return;
    }
    entries.push({
      message: answerMessage(format, turn, script.idSeed + t),
      flags: flagOptions(turn.answerFlag),
    });
    facts.push(...turn.answer.facts);
  });

  if (script.breakMask !== 0 && !breakage.unfinishedTail && !breakage.orphanResult && !breakage.interleaved) {
    // Only an interleave was asked for and no round existed to host it: break it another way.
    entries.push({ message: orphanMessage(format, ids.orphan()), flags: {} });
    breakage.orphanResult = true;
  }

  return {
    format,
    messages: entries.map((entry) => entry.message),
    options: entries.map((entry) => entry.flags),
    facts: [...new Set(facts)],
    reusesIds: ids.reused,
    breakage,
  };
}

// ---------------------------------------------------------------- long sessions

const LONG_USER = [
  (f: FactSet) => `Next: fix ${f.path}, it fails since ${f.date}.`,
  (f: FactSet) => `Customer ${f.id} (${f.email}) reports a charge of ${f.number} USD.`,
  (f: FactSet) => `Run the tests for ${f.path} again.`,
  () => 'Continue.',
] as const;

const LONG_ANSWER = [
  (f: FactSet) => `Fixed ${f.path}; ${f.number} tests pass.`,
  (f: FactSet) => `Updated ${f.id}: contact is now ${f.email}, effective ${f.date}.`,
  () => 'Done, nothing else changed.',
] as const;

/**
 * A deterministic long agent session of exactly `n` messages for the benchmark and the demo:
 * the same features as `conversationArb` (parallel calls, shuffled results, a large result now and
 * then, images, reused ids, thinking blocks) without fast-check, so 100k messages take about a
 * second. It starts with a system message and is valid for `format` at every length (it may end
 * on a user message when `n` cuts a turn short).
 */
export function longSessionMessages(n: number, format: MessageFormat, seed: number): Message[] {
  const random = seededRandom(seed);
  const ids = new IdMaker(format, seed ^ 0x5bd1e995);
  const out: Message[] = [];
  if (n <= 0) return out;
  out.push({ role: 'system', content: SYSTEM_PROMPTS[seed % SYSTEM_PROMPTS.length] as string });
  let turn = 0;
  while (out.length < n) {
    turn += 1;
    const facts = randomFactSet(random);
    const text = random.pick(LONG_USER)(facts);
    const image: ImageSpec | null =
      turn % 25 === 0
        ? {
            width: random.int(64, 2560),
            height: random.int(64, 1600),
            source: random.chance(0.7) ? 'base64' : 'url',
            padding: random.int(0, 256),
          }
        : null;
    out.push(userMessage(format, text, image, false));
    const rounds = random.chance(0.3) ? 0 : random.int(1, 3);
    const reuse = random.chance(0.2);
    for (let r = 0; r < rounds; r += 1) {
      const remaining = n - out.length;
      // Keep one slot for the answer; a round needs 2 messages in Anthropic and 1 + k in OpenAI.
      if (remaining < 3) break;
      let k = random.chance(0.6) ? 1 : random.int(2, 4);
      if (format === 'openai') k = Math.min(k, remaining - 2);
      const callIds = ids.round(k, reuse, random.int(0, 3));
      const calls: RenderedCall[] = [];
      for (let j = 0; j < k; j += 1) {
        const large = random.chance(1 / 80) ? random.int(10_000, 60_000) : 0;
        calls.push(
          renderCall(
            {
              tool: random.int(0, TOOLS.length - 1),
              seed: random.int(0, 2 ** 31),
              huge: large,
              error: false,
              screenshot: null,
            },
            callIds[j] as string,
          ),
        );
      }
      const style: RoundStyle = {
        shuffled: k > 1 && random.chance(0.3),
        shuffleKeys: [random.int(0, 99), random.int(0, 99), random.int(0, 99), random.int(0, 99)],
        preface: random.chance(0.3) ? 'Let me check.' : null,
        thinking: format === 'anthropic' && random.chance(0.2),
        trailingText: format === 'anthropic' && random.chance(0.05) ? 'Please hurry.' : null,
      };
      out.push(callMessage(format, calls, style, random.int(0, 2 ** 31)));
      out.push(...resultMessages(format, calls, style));
    }
    if (out.length < n) out.push({ role: 'assistant', content: random.pick(LONG_ANSWER)(facts) });
  }
  return out;
}
