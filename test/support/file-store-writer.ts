/**
 * A separate process for the file store's multi-process tests: appends COUNT messages named
 * WHO0…WHO{COUNT-1} to the conversation `shared` in DIR, retrying on conflicts, then exits 0.
 * Usage: node --import tsx test/support/file-store-writer.ts DIR WHO COUNT
 */

import { ConflictError } from '../../src/errors.js';
import { FileStore } from '../../src/stores/file.js';

const [dir, who, count] = process.argv.slice(2);
if (!dir || !who || !count) throw new Error('usage: file-store-writer.ts DIR WHO COUNT');
const store = new FileStore(dir);
for (let i = 0; i < Number(count); i++) {
  for (;;) {
    const head = await store.head('shared');
    try {
      await store.append(
        'shared',
        [
          {
            message: { role: 'user', content: `${who}${i}` },
            metadata: { timestamp: new Date().toISOString() },
          },
        ],
        {
          expectedSeq: head,
        },
      );
      break;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
}
await store.close();
