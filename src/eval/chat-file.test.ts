import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatFileError, normalizeAnswer, parseChat, readEvalInput } from './chat-file.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-chat-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const chat = {
  messages: [
    { role: 'user', content: '[1 May, 2024] Ana: I moved to Porto.' },
    { role: 'assistant', content: '[1 May, 2024] Ben: Nice.' },
  ],
  qa: [{ question: 'Where did Ana move?', answer: 'Porto!', evidence: [0] }],
};

describe('reading chats for eval', () => {
  it('normalizes answers as the set says: lowercase, punctuation removed, spaces collapsed', () => {
    expect(normalizeAnswer("  Charlotte's  Web! ")).toBe('charlotte s web');
    expect(parseChat(chat, '00.json').questions).toEqual([
      { question: 'Where did Ana move?', answer: 'porto', evidence: [0] },
    ]);
  });

  it('tells a folder of chats, one chat and a tau-bench file apart', async () => {
    await writeFile(join(dir, '01.json'), JSON.stringify(chat));
    await writeFile(join(dir, '00.json'), JSON.stringify(chat));
    await writeFile(join(dir, 'README.md'), 'not a chat');
    const folder = await readEvalInput(dir);
    expect(folder.kind).toBe('chats');
    expect(folder.kind === 'chats' && folder.chats.map((c) => c.name)).toEqual(['00', '01']);
    const one = await readEvalInput(join(dir, '01.json'));
    expect(one.kind === 'chats' && one.chats).toHaveLength(1);
    const tau = join(dir, 'runs.txt');
    await writeFile(tau, '[]');
    expect((await readEvalInput(tau)).kind).toBe('tau-bench');
  });

  it('refuses a chat that is not in the shape, naming the file and the place', async () => {
    expect(() => parseChat({ messages: [], qa: [] }, 'a.json')).toThrow(
      /a\.json: messages: expected at least one message/,
    );
    expect(() => parseChat({ ...chat, qa: [{ question: 'Q?' }] }, 'b.json')).toThrow(
      /b\.json: qa\[0\]\.answer: expected a string/,
    );
    expect(() => parseChat({ ...chat, messages: [{ role: 'user' }] }, 'c.json')).toThrow(ChatFileError);
    const empty = await mkdtemp(join(tmpdir(), 'ck-chat-empty-'));
    await expect(readEvalInput(empty)).rejects.toThrow(/no \.json or \.jsonl files in this folder/);
    await rm(empty, { recursive: true, force: true });
    await expect(readEvalInput(join(dir, 'nope.json'))).rejects.toThrow(/nope\.json: no such file/);
  });
});
