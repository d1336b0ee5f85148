/**
 * The one memory-tool suite every store runs: the six commands with the result and error strings
 * of the memory tool's documentation (https://platform.claude.com/docs/en/agents-and-tools/tool-use/memory-tool),
 * the size limits, scopes kept apart, the directory surviving a reopen, tool calls answered in
 * every provider shape, and concurrent writers in one process losing nothing. The factory returns
 * an empty store each time, as `testStore`'s does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { memoryDirectoryId, memoryTool } from '../../src/memory/memory-tool.js';
import type { StoreFixture } from './store-conformance.js';

/** The scopes the suite writes (a Redis fixture deletes these ids on cleanup). */
export const MEMORY_SUITE_IDS = [
  memoryDirectoryId({ agent: 'a' }),
  memoryDirectoryId({ agent: 'b' }),
  memoryDirectoryId({ conversation: 'c' }),
];

export function testMemoryTool(name: string, factory: () => Promise<StoreFixture>): void {
  describe(`memory tool on the ${name} store`, () => {
    let fixture: StoreFixture | undefined;
    afterEach(async () => {
      await fixture?.store.close();
      await fixture?.cleanup?.();
      fixture = undefined;
    });
    async function open(options: { maxFileBytes?: number; maxTotalBytes?: number; maxFiles?: number } = {}) {
      fixture = await factory();
      return memoryTool({ store: fixture.store, scope: { agent: 'a' }, ...options });
    }

    it('views an empty directory, creates a file and views it with line numbers', async () => {
      const memory = await open();
      expect(await memory.run({ command: 'view', path: '/memories' })).toEqual({
        text: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
        isError: false,
      });
      expect(
        await memory.run({ command: 'create', path: '/memories/notes.md', file_text: 'one\ntwo\n' }),
      ).toEqual({
        text: 'File created successfully at: /memories/notes.md',
        isError: false,
      });
      expect((await memory.run({ command: 'view', path: '/memories/notes.md' })).text).toBe(
        "Here's the content of /memories/notes.md with line numbers:\n     1\tone\n     2\ttwo",
      );
      expect(
        (await memory.run({ command: 'view', path: '/memories/notes.md', view_range: [2, -1] })).text,
      ).toBe("Here's the content of /memories/notes.md with line numbers:\n     2\ttwo");
      expect(await memory.run({ command: 'create', path: '/memories/notes.md', file_text: 'x' })).toEqual({
        text: 'Error: File /memories/notes.md already exists',
        isError: true,
      });
      expect(await memory.files()).toEqual({ '/memories/notes.md': 'one\ntwo\n' });
    });

    it('lists two levels deep with sizes', async () => {
      const memory = await open();
      await memory.run({ command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(2048) });
      await memory.run({ command: 'create', path: '/memories/p/q/r/deep.md', file_text: 'abc' });
      await memory.run({ command: 'create', path: '/memories/p/b.md', file_text: 'hello' });
      const listing = await memory.run({ command: 'view', path: '/memories' });
      expect(listing.text.split('\n').slice(1)).toEqual([
        '2.0K\t/memories',
        '2.0K\t/memories/a.md',
        '8B\t/memories/p',
        '5B\t/memories/p/b.md',
        '3B\t/memories/p/q',
      ]);
      expect((await memory.run({ command: 'view', path: '/memories/p' })).text.split('\n').slice(1)).toEqual([
        '8B\t/memories/p',
        '5B\t/memories/p/b.md',
        '3B\t/memories/p/q',
        '3B\t/memories/p/q/r',
      ]);
    });

    it('replaces a unique string, and refuses a missing or repeated one', async () => {
      const memory = await open();
      await memory.run({ command: 'create', path: '/memories/t.md', file_text: 'alpha\nbeta\nalpha\n' });
      expect(
        await memory.run({ command: 'str_replace', path: '/memories/t.md', old_str: 'gamma', new_str: 'x' }),
      ).toEqual({
        text: 'Error: No replacement was performed, old_str `gamma` did not appear verbatim in /memories/t.md.',
        isError: true,
      });
      expect(
        await memory.run({ command: 'str_replace', path: '/memories/t.md', old_str: 'alpha', new_str: 'x' }),
      ).toEqual({
        text: 'Error: No replacement was performed. Multiple occurrences of old_str `alpha` in lines: 1, 3. Please ensure it is unique',
        isError: true,
      });
      const done = await memory.run({
        command: 'str_replace',
        path: '/memories/t.md',
        old_str: 'beta',
        new_str: 'BETA',
      });
      expect(done.isError).toBe(false);
      expect(done.text).toMatch(/^The memory file has been edited\./);
      expect(done.text).toContain('     2\tBETA');
      expect((await memory.files())['/memories/t.md']).toBe('alpha\nBETA\nalpha\n');
      expect(
        await memory.run({ command: 'str_replace', path: '/memories/none.md', old_str: 'a', new_str: 'b' }),
      ).toEqual({
        text: 'Error: The path /memories/none.md does not exist. Please provide a valid path.',
        isError: true,
      });
    });

    it('inserts at a line, and refuses a line outside the file', async () => {
      const memory = await open();
      await memory.run({ command: 'create', path: '/memories/t.md', file_text: 'a\nb\n' });
      expect(
        await memory.run({ command: 'insert', path: '/memories/t.md', insert_line: 0, insert_text: 'top' }),
      ).toEqual({
        text: 'The file /memories/t.md has been edited.',
        isError: false,
      });
      await memory.run({ command: 'insert', path: '/memories/t.md', insert_line: 3, insert_text: 'end\n' });
      expect((await memory.files())['/memories/t.md']).toBe('top\na\nb\nend\n');
      expect(
        await memory.run({ command: 'insert', path: '/memories/t.md', insert_line: 9, insert_text: 'x' }),
      ).toEqual({
        text: 'Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]',
        isError: true,
      });
    });

    it('deletes files and directories, renames them, and refuses what does not exist or would clash', async () => {
      const memory = await open();
      await memory.run({ command: 'create', path: '/memories/d/one.md', file_text: '1' });
      await memory.run({ command: 'create', path: '/memories/d/two.md', file_text: '2' });
      await memory.run({ command: 'create', path: '/memories/x.md', file_text: 'x' });
      expect(
        await memory.run({ command: 'rename', old_path: '/memories/d', new_path: '/memories/e' }),
      ).toEqual({
        text: 'Successfully renamed /memories/d to /memories/e',
        isError: false,
      });
      expect(Object.keys(await memory.files()).sort()).toEqual([
        '/memories/e/one.md',
        '/memories/e/two.md',
        '/memories/x.md',
      ]);
      expect(
        await memory.run({ command: 'rename', old_path: '/memories/x.md', new_path: '/memories/e/one.md' }),
      ).toEqual({
        text: 'Error: The destination /memories/e/one.md already exists',
        isError: true,
      });
      expect(
        (await memory.run({ command: 'rename', old_path: '/memories/gone.md', new_path: '/memories/y.md' }))
          .text,
      ).toBe('Error: The path /memories/gone.md does not exist. Please provide a valid path.');
      expect(await memory.run({ command: 'delete', path: '/memories/e' })).toEqual({
        text: 'Successfully deleted /memories/e',
        isError: false,
      });
      expect(await memory.run({ command: 'delete', path: '/memories/e' })).toEqual({
        text: 'Error: The path /memories/e does not exist. Please provide a valid path.',
        isError: true,
      });
      expect((await memory.run({ command: 'delete', path: '/memories' })).isError).toBe(true);
      expect(await memory.files()).toEqual({ '/memories/x.md': 'x' });
    });

    it('refuses writes over the limits per file, in total and in count, writing nothing', async () => {
      const memory = await open({ maxFileBytes: 10, maxTotalBytes: 16, maxFiles: 3 });
      expect(
        (await memory.run({ command: 'create', path: '/memories/big', file_text: 'é'.repeat(6) })).text,
      ).toMatch(/12 bytes, over the limit of 10 bytes per memory file; nothing was written/);
      await memory.run({ command: 'create', path: '/memories/a', file_text: '12345678' });
      const total = await memory.run({ command: 'create', path: '/memories/b', file_text: '123456789' });
      expect(total.isError).toBe(true);
      expect(total.text).toMatch(/would hold 17 bytes, over its limit of 16/);
      const grow = await memory.run({
        command: 'insert',
        path: '/memories/a',
        insert_line: 0,
        insert_text: 'abcdefgh',
      });
      expect(grow.isError).toBe(true);
      await memory.run({ command: 'create', path: '/memories/b', file_text: '' });
      await memory.run({ command: 'create', path: '/memories/c', file_text: '' });
      expect((await memory.run({ command: 'create', path: '/memories/d', file_text: '' })).text).toMatch(
        /4 files, over its limit of 3/,
      );
      expect(await memory.files()).toEqual({
        '/memories/a': '12345678',
        '/memories/b': '',
        '/memories/c': '',
      });
    });

    it('keeps scopes apart and survives a reopen', async () => {
      const memory = await open();
      const fx = fixture as StoreFixture;
      await memory.run({ command: 'create', path: '/memories/mine.md', file_text: 'agent a' });
      const other = memoryTool({ store: fx.store, scope: { agent: 'b' } });
      const chat = memoryTool({ store: fx.store, scope: { conversation: 'c' } });
      expect(await other.files()).toEqual({});
      await chat.run({ command: 'create', path: '/memories/mine.md', file_text: 'conversation c' });
      expect((await memory.files())['/memories/mine.md']).toBe('agent a');
      if (fx.reopen) {
        const again = await fx.reopen();
        try {
          const reopened = memoryTool({ store: again, scope: { agent: 'a' } });
          expect(await reopened.files()).toEqual({ '/memories/mine.md': 'agent a' });
        } finally {
          await again.close();
        }
      }
    });

    it('answers tool calls in each provider shape', async () => {
      const memory = await open();
      const input = { command: 'create', path: '/memories/t.md', file_text: 'hi' };
      expect(await memory.handleToolCall({ type: 'tool_use', id: 'toolu_1', name: 'memory', input })).toEqual(
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: 'File created successfully at: /memories/t.md',
            },
          ],
        },
      );
      const view = { command: 'view', path: '/memories/none' };
      expect(
        await memory.handleToolCall({
          id: 'call_1',
          type: 'function',
          function: { name: 'memory', arguments: JSON.stringify(view) },
        }),
      ).toEqual({
        role: 'tool',
        tool_call_id: 'call_1',
        content: 'Error: The path /memories/none does not exist. Please provide a valid path.',
      });
      expect(
        await memory.handleToolCall({
          type: 'function_call',
          call_id: 'c2',
          name: 'memory',
          arguments: JSON.stringify(view),
        }),
      ).toMatchObject({ type: 'function_call_output', call_id: 'c2' });
      expect(await memory.handleToolCall({ functionCall: { name: 'memory', args: view } })).toMatchObject({
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'memory',
              response: { error: expect.stringMatching(/does not exist/) },
            },
          },
        ],
      });
      expect(
        await memory.handleToolCall({ type: 'tool_use', id: 't', name: 'recall', input: {} }),
      ).toBeNull();
      const bad = await memory.handleToolCall({
        id: 'call_3',
        type: 'function',
        function: { name: 'memory', arguments: '{' },
      });
      expect(bad).toEqual({
        role: 'tool',
        tool_call_id: 'call_3',
        content: 'Error: the arguments are not valid JSON',
      });
    });

    it('loses no write when many edit one directory at once', async () => {
      const memory = await open();
      const fx = fixture as StoreFixture;
      const twin = memoryTool({ store: fx.store, scope: { agent: 'a' } });
      await memory.run({ command: 'create', path: '/memories/log.md', file_text: '' });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? memory : twin).run({
            command: 'insert',
            path: '/memories/log.md',
            insert_line: 0,
            insert_text: `line ${i}`,
          }),
        ),
      );
      expect(results.every((r) => !r.isError)).toBe(true);
      const lines = ((await memory.files())['/memories/log.md'] ?? '').trim().split('\n').sort();
      expect(lines).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`).sort());
    });

    it('refuses an id whose metadata is not a memory directory, changing nothing', async () => {
      fixture = await factory();
      const id = memoryDirectoryId({ agent: 'a' });
      await fixture.store.setMeta(id, { plan: 'someone else' });
      const memory = memoryTool({ store: fixture.store, scope: { agent: 'a' } });
      await expect(
        memory.run({ command: 'create', path: '/memories/x', file_text: 'x' }),
      ).rejects.toBeInstanceOf(StoreError);
      expect((await fixture.store.getMeta(id)).value).toEqual({ plan: 'someone else' });
    });
  });
}
