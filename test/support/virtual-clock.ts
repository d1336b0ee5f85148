/**
 * A clock a test or benchmark moves: a fake model sleeps on it, and its timers fire only when the
 * clock is advanced past them, so a model's latency costs no real time.
 */
export class VirtualClock {
  now = 0;
  private timers: Array<{ at: number; fire: () => void }> = [];

  /** Resolves once the clock has been advanced by `ms`. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.timers.push({ at: this.now + ms, fire: resolve });
      this.timers.sort((a, b) => a.at - b.at);
    });
  }

  /** When the next timer fires, if any is set. */
  next(): number | undefined {
    return this.timers[0]?.at;
  }

  /** Moves the clock to `at` (never back), firing every timer due by then. */
  advanceTo(at: number): void {
    this.now = Math.max(this.now, at);
    while (this.timers.length > 0 && this.timers[0]!.at <= this.now) this.timers.shift()!.fire();
  }

  /**
   * Lets what was started run (`settle`), then moves on by `ms`, firing the timers due on the way
   * one at a time and letting what each starts run (a call made when another answers is timed too).
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    await settle();
    const to = this.now + ms;
    for (let next = this.next(); next !== undefined && next <= to; next = this.next()) {
      this.advanceTo(next);
      await settle();
    }
    this.now = to;
  }
}
