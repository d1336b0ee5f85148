import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolEffectByName, toolEffectClassifier, toolNameWords } from './tool-effect.js';

describe('toolEffectByName', () => {
  it('reads tools whose name is a read verb, in any case style', () => {
    for (const name of [
      'read_file',
      'getUser',
      'list-files',
      'search_docs',
      'fetch_url',
      'open',
      'view',
      'cat',
      'grep',
      'find_flights',
      'GetOrderDetails',
      'recall',
      'ls',
    ]) {
      expect(toolEffectByName(name), name).toBe('read');
    }
  });

  it('treats every other tool as changing something (issue 30: edit, create, insert, apply_patch, write_file, delete_branch)', () => {
    for (const name of [
      'edit',
      'create',
      'insert',
      'apply_patch',
      'write_file',
      'delete_branch',
      'bash',
      'str_replace_based_edit_tool',
      'get_or_create_user',
      'read_and_delete',
      'cancel_pending_order',
      'transfer_to_human_agents',
      'memory',
      '',
    ]) {
      expect(toolEffectByName(name), name).toBe('write');
    }
  });

  it('a verb of change anywhere in the name wins over a read verb', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('read', 'get', 'list', 'search', 'fetch'),
        fc.constantFrom('write', 'delete', 'update', 'create', 'send'),
        fc.constantFrom('_', '-', '.'),
        (read, write, sep) => {
          expect(toolEffectByName(`${read}${sep}${write}`)).toBe('write');
          expect(toolEffectByName(`${write}${sep}${read}`)).toBe('write');
        },
      ),
    );
  });

  it('splits names at separators and camelCase humps', () => {
    expect(toolNameWords('getHTTPResponse_body-v2')).toEqual(['get', 'http', 'response', 'body', 'v2']);
  });
});

describe('toolEffectClassifier', () => {
  it('names given in the options win, sideEffectTools over readOnlyTools', () => {
    const effectOf = toolEffectClassifier({
      readOnlyTools: ['bash_readonly', 'get_weather'],
      sideEffectTools: ['get_weather', 'fetch_and_charge'],
    });
    expect(effectOf('bash_readonly')).toBe('read');
    expect(effectOf('get_weather')).toBe('write');
    expect(effectOf('fetch_and_charge')).toBe('write');
    expect(effectOf('read_file')).toBe('read');
    expect(effectOf('edit')).toBe('write');
  });
});
