/** The memory tool's conformance suite on every store driver (Redis and Postgres when running). */
import { afterAll, describe } from 'vitest';
import { MemoryStore } from '../../src/stores/memory.js';
import { MEMORY_SUITE_IDS, testMemoryTool } from '../support/memory-conformance.js';
import { skipFor } from '../support/requirements.js';
import { sharedDrivers } from './fixtures/drivers.js';
import { openSpec } from './fixtures/open-store.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

testMemoryTool('memory', async () => ({ store: new MemoryStore() }));

for (const driver of sharedDrivers(cleanups, MEMORY_SUITE_IDS)) {
  describe(driver.name, skipFor(driver.missing), () => {
    testMemoryTool(driver.name, async () => {
      const spec = await driver.spec();
      return { store: await openSpec(spec), reopen: () => openSpec(spec) };
    });
  });
}
