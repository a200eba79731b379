// Which delivered batches have landed in the Pi session, and waiting for one to land.
//
// A batch "lands" when Pi emits its message's `message_end` (role "custom", our customType,
// details.deliveryId): then it is in the session. Contract:
// - `sent(id)` marks a batch handed to sendMessage; `landed(id)` (from message_end) marks it in
//   the session and wakes whoever waits for it, also when it lands after they gave up.
// - `wait(id, timeoutMs)` resolves once it has landed (at once if it already has), rejects after
//   timeoutMs; several waits on one id all wake.
// - The last MAX_REMEMBERED ids that landed are remembered, so a resend is not shown twice.
// - `forget(id)` drops a sent batch that cannot land any more (an idle Pi has nothing queued).

/** How many landed delivery ids are remembered (oldest forgotten first). */
const MAX_REMEMBERED = 1024;

export class Landings {
  private readonly done = new Set<string>();
  private readonly waiters = new Map<string, (() => void)[]>();

  hasLanded(id: string): boolean {
    return this.done.has(id);
  }

  /** Handed to Pi, not landed yet. */
  isInFlight(id: string): boolean {
    return this.waiters.has(id);
  }

  sent(id: string): void {
    if (!this.waiters.has(id)) this.waiters.set(id, []);
  }

  forget(id: string): void {
    this.waiters.delete(id);
  }

  landed(id: string): void {
    this.done.add(id);
    if (this.done.size > MAX_REMEMBERED) {
      const oldest = this.done.values().next();
      if (oldest.done !== true) this.done.delete(oldest.value);
    }
    const waiting = this.waiters.get(id) ?? [];
    this.waiters.delete(id);
    for (const wake of waiting) wake();
  }

  wait(id: string, timeoutMs: number): Promise<void> {
    if (this.done.has(id)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the message did not land in the session within ${timeoutMs} ms`)), timeoutMs);
      const list = this.waiters.get(id) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.waiters.set(id, list);
    });
  }
}
