#!/usr/bin/env node
import './module-paths';
import { processIo } from './context/output';
import { run } from './program';

/** The `openbot` command line client (see `openbot --help`); it reaches the server only through libs/client. */
void run(process.argv.slice(2), { io: processIo, env: process.env }).then((code) => {
  process.exitCode = code;
});
