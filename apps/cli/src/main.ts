#!/usr/bin/env node
import './module-paths';
import { EXIT } from './context/exit-codes';
import { processIo } from './context/output';
import { run } from './program';

// A reader that stops early (`openbot chat --json | head`) closes the pipe: like other Unix tools,
// the CLI then ends quietly with status 0 instead of dying on the write with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.ok);
    throw error;
  });
}

/** The `openbot` command line client (see `openbot --help`); it reaches the server only through libs/client. */
void run(process.argv.slice(2), { io: processIo, env: process.env }).then((code) => {
  process.exitCode = code;
});
