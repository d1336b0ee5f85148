/**
 * The SQLite store's WAL checkpoints after a large replace, off the event loop (issue 32: no stall
 * over 50 ms in a `setMessages`). A replace of 100,000 messages writes ~100 MB to the WAL in one
 * transaction; the automatic checkpoint its `COMMIT` then ran (copying all of it into the database
 * file and syncing it) held the event loop for ~100 ms. Instead, the store's connection commits
 * with automatic checkpoints off, and a PASSIVE checkpoint runs right after on a connection of its
 * own to the same file, in a worker thread; automatic checkpoints are back on once it reported,
 * so the WAL cannot keep growing (what the worker could not copy, because a reader held it, the
 * next automatic checkpoint copies).
 *
 * - Durability is unchanged: a checkpoint only copies committed pages from the WAL into the
 *   database file, and the worker's connection syncs as the store's would (`synchronous`); a
 *   crash meanwhile leaves the WAL, which the next connection to open the file recovers from.
 * - Other connections and processes go on as before: a PASSIVE checkpoint waits for no lock, and
 *   any of them may checkpoint on its own meanwhile.
 * - The worker is started on the first large replace, unreferenced (it never keeps the process
 *   alive), and closed with the store, its connection first.
 * - Should the worker fail to start or to open the file, checkpoints are automatic again (the
 *   commit runs them, as before), so nothing is left uncheckpointed.
 */

import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * The worker: its own connection to the file, a PASSIVE checkpoint per message, each reported
 * back (`{ busy, log, checkpointed }`, or `{ error }`); `close` closes the connection and ends it.
 * Plain CommonJS evaluated as is (no file to bundle), loading the store's own better-sqlite3.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = ' + workerData.synchronous);
parentPort.on('message', (what) => {
  if (what === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let report;
  try {
    report = db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (error) {
    report = { error: String(error && error.message ? error.message : error) };
  }
  parentPort.postMessage(report);
});
`;

/** The WAL checkpoints of one SQLite store's connection (see the module comment). */
export class SqliteCheckpointer {
  readonly #db: Database.Database;
  readonly #synchronous: string;
  /** The connection's `wal_autocheckpoint` (pages), put back once no deferral holds. */
  readonly #automatic: number;
  #worker: Worker | null = null;
  /** Set once the worker failed (or the store closed): checkpoints stay automatic from then on. */
  #off = false;
  /** Commits under way and worker checkpoints not yet reported, each keeping automatic ones off. */
  #holds = 0;
  /** Checkpoints asked of the worker and not yet reported. */
  #pending = 0;

  constructor(db: Database.Database, synchronous: string) {
    this.#db = db;
    this.#synchronous = synchronous.toUpperCase();
    this.#automatic = Number(db.pragma('wal_autocheckpoint', { simple: true }));
  }

  /**
   * Turns automatic checkpoints off for the commit about to run (true), unless they are to stay
   * on (false: the worker failed, or the connection has none). Follow with {@link afterCommit}.
   */
  deferAutomatic(): boolean {
    if (this.#off || !(this.#automatic > 0)) return false;
    if (this.#holds++ === 0) this.#db.pragma('wal_autocheckpoint = 0');
    return true;
  }

  /**
   * After the commit {@link deferAutomatic} was called for: when it committed, a checkpoint is
   * asked of the worker (automatic ones stay off until it reports); else, or when the worker
   * cannot be had, automatic checkpoints are on again.
   */
  afterCommit(committed: boolean): void {
    const worker = committed ? this.#start() : null;
    if (worker === null) {
      this.#release(1);
      return;
    }
    this.#pending++;
    worker.postMessage('checkpoint');
  }

  /** Closes the worker's connection and ends it, after the checkpoints asked of it; idempotent. */
  async close(): Promise<void> {
    this.#off = true;
    const worker = this.#worker;
    this.#worker = null;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Referenced while the store's close awaits it (else a process with nothing else to do would
    // end before the close resolves).
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  #start(): Worker | null {
    if (this.#off) return null;
    if (this.#worker !== null) return this.#worker;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          driver: createRequire(import.meta.url).resolve('better-sqlite3'),
          path: resolve(this.#db.name),
          synchronous: this.#synchronous,
        },
      });
    } catch {
      this.#fail();
      return null;
    }
    worker.unref();
    // A report (`{ busy, log, checkpointed }` or `{ error }`): frames a reader held, or a failed
    // checkpoint, are left to the automatic checkpoints now on again.
    worker.on('message', () => {
      this.#pending--;
      this.#release(1);
    });
    worker.on('error', () => this.#fail());
    worker.on('exit', () => {
      if (this.#worker === worker) this.#fail();
    });
    this.#worker = worker;
    return worker;
  }

  /** The worker is gone: what it was asked is dropped and checkpoints are automatic again. */
  #fail(): void {
    this.#off = true;
    const worker = this.#worker;
    this.#worker = null;
    void worker?.terminate();
    this.#release(this.#pending);
    this.#pending = 0;
  }

  #release(count: number): void {
    if (count <= 0) return;
    this.#holds = Math.max(0, this.#holds - count);
    if (this.#holds === 0 && this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${this.#automatic}`);
  }
}
