import type { ReportClient } from '@cellsched/placement-client';
import type { Pool } from 'pg';
import type { ParsedArgs } from '../args';

/** Where a command prints: stdout lines and stderr lines. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** What a command may use; pools are opened on demand and closed by main after the command. */
export interface CommandContext {
  readonly io: Io;
  /** The API database pool; throws `UsageError` when no API database URL is configured. */
  apiDb(): Pool;
  /** A pool on another database (a cell's), closed by main at the end. */
  openDb(url: string): Pool;
  /** Placement's REST API (admin token); throws `UsageError` when no placement URL is configured. */
  placement(): ReportClient;
}

/** One `cellsched-manage <category> <action>`: its options and what it does. Returns the exit code. */
export interface Command {
  readonly usage: string;
  readonly help: string;
  /** Boolean options (take no value). */
  readonly flags?: readonly string[];
  /** Options that take a value. */
  readonly options?: readonly string[];
  run(ctx: CommandContext, args: ParsedArgs): Promise<number>;
}
