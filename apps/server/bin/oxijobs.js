#!/usr/bin/env node
// The oxijobs command line: see `oxijobs --help`.
import('../dist/cli.js').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && /dist\/cli\.js/.test(String(error.message))) {
    console.error('oxijobs: the server is not built yet; run `pnpm build` (or `pnpm start`) first');
    process.exit(1);
  }
  throw error;
});
