import { setTimeout as sleep } from 'node:timers/promises'

/** Poll `check` until it holds; throws naming `what` if it does not within `withinMs`. */
export async function until(check: () => Promise<boolean>, what: string, withinMs = 5000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (await check()) return
    await sleep(everyMs)
  }
  throw new Error(`timed out waiting for ${what}`)
}
