/**
 * A progress bar for long commands, without a dependency. On a terminal it redraws one line in
 * place (`[#####-----] 42% 250/600 msgs`), at most every `intervalMs`; anywhere else (a pipe, a
 * CI log) it prints a plain line each time another tenth is done, so logs stay short and
 * readable.
 */

/** Where progress goes: a stream, and whether it is a terminal. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** What a bar counts, where it draws, and how often. */
export interface ProgressOptions {
  total: number;
  /** Unit after the counts (default `msgs`). */
  unit?: string;
  /** Prefix of the plain lines (default `progress`). */
  label?: string;
  /** Default: standard error. */
  stream?: ProgressStream;
  /** Cells in the bar (default 30). */
  width?: number;
  /** Least time between two redraws on a terminal (default 80 ms). */
  intervalMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** The bar itself: `[#####-----] 42% 250/600 msgs`. */
export function renderBar(current: number, total: number, width = 30, unit = 'msgs'): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, current / total)) : 1;
  const filled = Math.round(ratio * width);
  const pct = Math.floor(ratio * 100);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(pct).padStart(3)}% ${current}/${total} ${unit}`;
}

/** Progress of one job: call `update` as it goes, `log` for lines in between, `done` at the end. */
export class ProgressBar {
  private readonly stream: ProgressStream;
  private readonly tty: boolean;
  private readonly total: number;
  private readonly unit: string;
  private readonly label: string;
  private readonly width: number;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private current = 0;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private drawn = false;
  private lastTenth = 0;
  private finished = false;

  constructor(options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    this.total = Math.max(0, options.total);
    this.unit = options.unit ?? 'msgs';
    this.label = options.label ?? 'progress';
    this.width = options.width ?? 30;
    this.intervalMs = options.intervalMs ?? 80;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether the bar redraws in place (a terminal) or prints plain lines. */
  get interactive(): boolean {
    return this.tty;
  }

  /** Sets how far along the job is; draws when enough time (or another tenth) has passed. */
  update(current: number): void {
    if (this.finished) return;
    this.current = Math.min(current, this.total);
    if (this.tty) {
      const t = this.now();
      if (t - this.lastDraw >= this.intervalMs || this.current === this.total) {
        this.lastDraw = t;
        this.draw();
      }
      return;
    }
    const tenth = this.total > 0 ? Math.floor((this.current / this.total) * 10) : 10;
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      const pct = this.total > 0 ? Math.floor((this.current / this.total) * 100) : 100;
      this.stream.write(`${this.label}: ${this.current}/${this.total} ${this.unit} (${pct}%)\n`);
    }
  }

  private draw(): void {
    this.stream.write(`\r${renderBar(this.current, this.total, this.width, this.unit)}\x1b[K`);
    this.drawn = true;
  }

  private clear(): void {
    if (this.tty && this.drawn) this.stream.write('\r\x1b[K');
  }

  /**
   * Prints a line without tearing the bar: on a terminal the bar is wiped, the line written (to
   * `to`, default the bar's stream) and the bar drawn again below it.
   */
  log(line: string, to: ProgressStream = this.stream): void {
    this.clear();
    to.write(`${line}\n`);
    if (this.tty && this.drawn && !this.finished) this.draw();
  }

  /** Ends the bar where it is, without claiming completion: for a job that failed. */
  stop(): void {
    if (this.finished) return;
    this.finished = true;
    this.clear();
    this.drawn = false;
  }

  /** Draws the final state and ends the bar's line (a terminal), or prints the last tenth. */
  done(): void {
    if (this.finished) return;
    this.update(this.total);
    this.finished = true;
    if (this.tty && this.drawn) {
      this.clear();
      this.drawn = false;
    }
  }
}
