// SPDX-License-Identifier: MIT
// What the e2e scripts share: a failed check, and waiting for a condition.

/** A check that failed: reported by its message, without a stack. */
export class Failure extends Error {}

export function ok(cond, what) {
  if (!cond) throw new Failure(what);
}

/** Poll @fn until it returns a truthy value (or throw @what after @ms). */
export async function until(fn, what, ms) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Failure(`timed out waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 25)); // poll interval, not a wait for the condition
  }
}
