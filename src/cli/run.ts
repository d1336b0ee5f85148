/**
 * Runs the command from source (`node --import tsx src/cli/run.ts …`): what the tests spawn, so
 * they need no build. The published command is `bin/contextkit.js`, over the built `main`.
 */
import { main } from './main.js';

await main(process.argv);
