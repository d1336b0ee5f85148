/**
 * Where JSON text first breaks the grammar. `JSON.parse` on Node 20 often says only "Unexpected
 * token" without a position, and a user with a 4 MB transcript needs the line and column, so on
 * a parse failure the text is scanned once more by this small validating scanner.
 */

/** The first syntax error in a JSON text: 1-based line and column, and what was wrong. */
export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  reason: string;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX = /^[0-9a-fA-F]{4}$/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Failure {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

function describe(char: string | undefined): string {
  if (char === undefined) return 'unexpected end of input';
  return `unexpected ${JSON.stringify(char)}`;
}

class Scanner {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(reason?: string): never {
    throw new Failure(this.pos, reason ?? describe(this.text[this.pos]));
  }

  skipWhitespace(): void {
    while (this.pos < this.text.length && WHITESPACE.has(this.text[this.pos] as string)) this.pos++;
  }

  expect(char: string, what: string): void {
    this.skipWhitespace();
    if (this.text[this.pos] !== char) this.fail(`${describe(this.text[this.pos])}, expected ${what}`);
    this.pos++;
  }

  value(depth: number): void {
    if (depth > 1_000) this.fail('nested more than 1000 levels deep');
    this.skipWhitespace();
    const char = this.text[this.pos];
    if (char === '{') this.object(depth);
    else if (char === '[') this.array(depth);
    else if (char === '"') this.string();
    else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) this.number();
    else if (!this.literal('true') && !this.literal('false') && !this.literal('null')) {
      this.fail(`${describe(char)}, expected a value`);
    }
  }

  literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  number(): void {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match || match[0] === '-') this.fail('invalid number');
    this.pos += match[0].length;
  }

  string(): void {
    this.pos++;
    for (;;) {
      const char = this.text[this.pos];
      if (char === undefined) this.fail('unterminated string');
      if (char === '"') {
        this.pos++;
        return;
      }
      if (char < ' ') this.fail('control character in a string (write it as an escape such as \\n)');
      if (char === '\\') {
        const next = this.text[this.pos + 1];
        if (next === 'u') {
          this.pos++;
          if (!HEX.test(this.text.slice(this.pos + 1, this.pos + 5))) this.fail('invalid \\u escape');
          this.pos += 5;
          continue;
        }
        this.pos++;
        if (next === undefined || !ESCAPES.has(next)) this.fail('invalid escape in a string');
      }
      this.pos++;
    }
  }

  object(depth: number): void {
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"')
        this.fail(`${describe(this.text[this.pos])}, expected a property name in quotes`);
      this.string();
      this.expect(':', '":"');
      this.value(depth + 1);
      this.skipWhitespace();
      const char = this.text[this.pos];
      if (char === '}') {
        this.pos++;
        return;
      }
      if (char !== ',') this.fail(`${describe(char)}, expected "," or "}"`);
      this.pos++;
    }
  }

  array(depth: number): void {
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      this.skipWhitespace();
      const char = this.text[this.pos];
      if (char === ']') {
        this.pos++;
        return;
      }
      if (char !== ',') this.fail(`${describe(char)}, expected "," or "]"`);
      this.pos++;
    }
  }
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/**
 * The first place `text` is not valid JSON, or undefined when it is. Agrees with `JSON.parse` on
 * what is valid; its reason is phrased for people ("unexpected ",", expected a value").
 */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.value(0);
    scanner.skipWhitespace();
    if (scanner.pos < text.length)
      scanner.fail(`${describe(text[scanner.pos])} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    return { offset: error.offset, ...lineAndColumn(text, error.offset), reason: error.reason };
  }
}
