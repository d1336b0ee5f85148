import { describe, expect, it } from 'vitest';
import type { HistoryEntry, Message } from '../messages/types.js';
import { getModelInfo } from '../tokens/catalog.js';
import { createTokenCounter } from '../tokens/counter.js';
import {
  dialogueMemory,
  entryStatements,
  isDialogue,
  isDialogueMemory,
  memoryStatements,
  statementScore,
} from './dialogue-memory.js';
import { summarizeOffline } from './offline-summarizer.js';

const counter = createTokenCounter(getModelInfo('gpt-4o')!);
const countText = (t: string) => counter.countText(t);

function entries(messages: Array<Message | [Message, string]>): HistoryEntry[] {
  return messages.map((m, seq) => {
    const [message, timestamp] = Array.isArray(m) ? m : [m, '2024-02-01T10:00:00.000Z'];
    return { seq, message, metadata: { timestamp } };
  });
}

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });

const chat = entries([
  user('[9:00 am on 3 March, 2024] Ana: Hey Ben! How are you?'),
  assistant('[9:01 am on 3 March, 2024] Ben: Hi Ana! Doing great, thanks for asking.'),
  user('[9:02 am on 3 March, 2024] Ana: I adopted a grey cat named Pixel from the shelter last week.'),
  assistant('[9:03 am on 3 March, 2024] Ben: Wow, that is awesome! What does Pixel like to eat?'),
  user(
    '[4:10 pm on 9 April, 2024] Ana: Yeah, so my sister Joan is moving to Lisbon in June for a job at the aquarium.',
  ),
  assistant('[4:11 pm on 9 April, 2024] Ben: That sounds great!'),
  assistant('[4:12 pm on 9 April, 2024] Ben: My favorite book is "The Hobbit", I read it twice as a kid.'),
  user('[4:13 pm on 9 April, 2024] Ana: Thanks, Ben!'),
]);

describe('dialogue memory', () => {
  it('keeps the statements that carry facts, with who said each and the date of the turn', () => {
    const memory = dialogueMemory(chat, { maxTokens: 500, countText });
    expect(memory.split('\n')).toEqual([
      '[3 March, 2024] Ana: I adopted a grey cat named Pixel from the shelter last week.',
      '[9 April, 2024] Ana: my sister Joan is moving to Lisbon in June for a job at the aquarium. | Ben: My favorite book is "The Hobbit", I read it twice as a kid.',
    ]);
    expect(isDialogueMemory(memory)).toBe(true);
  });

  it('drops small talk: greetings, thanks, praise and questions back', () => {
    const speakers = new Set(['ana', 'ben']);
    for (const text of [
      'Hey Ben!',
      'How are you?',
      'Thanks, Ben!',
      'That sounds great!',
      'What does Pixel like to eat?',
    ])
      expect(statementScore(text, speakers)).toBeLessThanOrEqual(0);
    const memory = dialogueMemory(chat, { maxTokens: 500, countText });
    expect(memory).not.toMatch(/Hey|thanks|awesome|How are you|sounds great/i);
  });

  it('uses the day of the metadata timestamp when a turn gives no date, and the role when no speaker', () => {
    const plain = entries([
      [user('We booked the flight to Osaka for 14 October, seat 23F.'), '2025-06-02T08:00:00.000Z'],
      [assistant('Noted: Osaka on 14 October, seat 23F.'), '2025-06-02T08:00:05.000Z'],
      [user('Also my dentist appointment moved to Tuesday at 3 pm.'), '2025-06-05T09:00:00.000Z'],
      [assistant('Ok.'), '2025-06-05T09:00:01.000Z'],
    ]);
    const statements = entryStatements(plain);
    expect(statements[0]).toMatchObject({ speaker: 'user', date: '2025-06-02' });
    const memory = dialogueMemory(plain, { maxTokens: 500, countText });
    expect(memory).toContain('[2025-06-02] user: We booked the flight to Osaka for 14 October, seat 23F.');
    expect(memory).toContain('[2025-06-05] user: Also my dentist appointment moved to Tuesday at 3 pm.');
  });

  it('takes the date, not the time, from a stamp, and a name as speaker only when turns share it', () => {
    const stamped = entries([
      user('[2023-05-08 13:56] Alice: We signed the lease for the flat on Rua Augusta, rent 950 euros.'),
      assistant('[2023-05-08 13:57] Bob: Note: the landlord Mr. Silva wants the deposit by Friday.'),
      user('[2023-05-09T08:00:00Z] Alice: My brother Tiago arrives from Faro on Sunday.'),
      assistant('[8 May 2023, 1:56 pm] Note: I booked the van for 9 am.'),
    ]);
    const statements = entryStatements(stamped);
    expect(statements.map((s) => [s.date, s.speaker])).toEqual([
      ['2023-05-08', 'Alice'],
      ['2023-05-08', 'assistant'],
      ['2023-05-09', 'Alice'],
      ['8 May 2023', 'assistant'],
    ]);
    expect(statements[1]!.text).toBe('Bob: Note: the landlord Mr. Silva wants the deposit by Friday.');
  });

  it('merges repeats: a statement said again in other words is kept once', () => {
    const repeated = entries([
      user('[1 May, 2024] Ana: I adopted a grey cat named Pixel from the shelter.'),
      assistant('[1 May, 2024] Ben: I started a pottery class on Mondays with my brother Tom.'),
      user('[2 May, 2024] Ana: I adopted a grey cat named Pixel from the shelter!'),
      user('[2 May, 2024] Ana: Remember, I adopted a grey cat named Pixel from the shelter.'),
    ]);
    const memory = dialogueMemory(repeated, { maxTokens: 500, countText });
    expect(memory.match(/Pixel/g)).toHaveLength(1);
    expect(memory).toContain('pottery class');
  });

  it('fits its room, keeping the statements worth the most', () => {
    for (const maxTokens of [5, 20, 40, 80]) {
      const memory = dialogueMemory(chat, { maxTokens, countText });
      expect(countText(memory)).toBeLessThanOrEqual(maxTokens);
    }
    expect(dialogueMemory(chat, { maxTokens: 0, countText })).toBe('');
    expect(dialogueMemory(chat, { maxTokens: 40, countText })).toMatch(/Pixel|Joan|Hobbit/);
  });

  it('is recursive: an earlier memory is folded in with its dates and speakers, not lost', () => {
    const first = dialogueMemory(chat.slice(0, 4), { maxTokens: 500, countText });
    const later = entries([
      user('[10 May, 2024] Ana: We planted three apple trees in the garden behind the house.'),
      assistant('[10 May, 2024] Ben: Nice!'),
      assistant('[10 May, 2024] Ben: I ran the Berlin marathon in 3 hours 40 minutes last year.'),
      user('[10 May, 2024] Ana: Congrats!'),
    ]);
    expect(memoryStatements(first)).toEqual([
      expect.objectContaining({ speaker: 'Ana', date: '3 March, 2024', previous: true }),
    ]);
    const second = summarizeOffline(later, { maxTokens: 500, countText, previousSummary: first });
    expect(second.split('\n')).toEqual([
      '[3 March, 2024] Ana: I adopted a grey cat named Pixel from the shelter last week.',
      '[10 May, 2024] Ana: We planted three apple trees in the garden behind the house. | Ben: I ran the Berlin marathon in 3 hours 40 minutes last year.',
    ]);
    // Folded again with no new turns worth keeping, it stays the same.
    const third = summarizeOffline(entries([user('[11 May, 2024] Ana: Thanks!'), assistant('Bye!')]), {
      maxTokens: 500,
      countText,
      previousSummary: second,
    });
    expect(third).toBe(second);
  });

  it('is deterministic, and left to the agent summary when tools are at work', () => {
    expect(dialogueMemory(chat, { maxTokens: 60, countText })).toBe(
      dialogueMemory(chat, { maxTokens: 60, countText }),
    );
    expect(isDialogue(chat)).toBe(true);
    const agent = entries([
      user('Look up order #W123.'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_order', arguments: '{"id":"#W123"}' } },
        ],
      } as Message,
      { role: 'tool', tool_call_id: 'c1', content: '{"status":"shipped"}' } as Message,
      assistant('It shipped.'),
    ]);
    expect(isDialogue(agent)).toBe(false);
  });
});
