#!/usr/bin/env node
// cellsched-manage: the composition root only (argv in, exit code out).
import { runCli } from './cli';

const io = {
  out: (text: string): void => {
    process.stdout.write(`${text}\n`);
  },
  err: (text: string): void => {
    process.stderr.write(`${text}\n`);
  },
};

void runCli(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
