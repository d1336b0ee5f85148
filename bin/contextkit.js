#!/usr/bin/env node
import('../dist/cli/main.js')
  .then((m) => m.main(process.argv))
  .catch((err) => {
    process.stderr.write(`contextkit: ${err?.message ? err.message : String(err)}\n`);
    process.exit(1);
  });
