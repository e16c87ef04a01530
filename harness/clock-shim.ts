/**
 * A controllable wall clock for a redis-server: `clock-shim.c` built as an LD_PRELOAD object (once per
 * process), and one control file per clock. Give `env` to `startRedis({ env })`; the server's
 * CLOCK_REALTIME, gettimeofday and time (so TIME, key expiry and TIME inside Lua) then follow
 * fake = anchorFake + (real − anchorReal) × rate + offset. Monotonic clocks are left alone.
 */
import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { mkdtemp, rename, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'

export interface ClockControl {
  /** env to give redis-server: LD_PRELOAD and CLOCK_SHIM_FILE */
  readonly env: Record<string, string>
  setRate(rate: number): Promise<void> // 1 = real speed
  step(ms: number): Promise<void> // adds ms to the offset (negative steps back)
  reset(): Promise<void> // rate 1, offset 0 (a step back to real time)
}

const SOURCE = new URL('./clock-shim.c', import.meta.url).pathname
/** The shim re-reads its control file at most every 20 ms; after this long every clock read sees a change. */
const APPLIED_AFTER_MS = 30

let built: Promise<{ dir: string; so: string }> | undefined
let clocks = 0

/** Compile the shim into a temp dir (removed at exit); once per process. */
function build(): Promise<{ dir: string; so: string }> {
  built ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-clock-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const so = path.join(dir, 'clock-shim.so')
    await promisify(execFile)('cc', ['-shared', '-fPIC', '-O2', '-o', so, SOURCE, '-ldl']).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT')
        throw new Error('the clock shim is compiled at test time and needs a C compiler: cc not found (Debian: apt-get install gcc)')
      throw err
    })
    return { dir, so }
  })()
  built.catch(() => (built = undefined)) // a failed build may be retried
  return built
}

/** A new clock (its own control file), real time until told otherwise. */
export async function clockShim(): Promise<ClockControl> {
  const { dir, so } = await build()
  const file = path.join(dir, `clock-${++clocks}.ctl`)
  let rate = 1
  let offsetMs = 0
  let epoch = 0
  let writes = 0
  // Written whole then renamed over the old file, so the shim never reads half a line.
  const write = async (): Promise<void> => {
    const next = `${file}.${++writes}.tmp`
    await writeFile(next, `${rate} ${offsetMs} ${epoch}\n`)
    await rename(next, file)
    await sleep(APPLIED_AFTER_MS)
  }
  await write()
  return {
    env: { LD_PRELOAD: so, CLOCK_SHIM_FILE: file },
    setRate(r) {
      if (!(r > 0) || !Number.isFinite(r)) throw new RangeError(`clock rate must be a positive number, got ${r}`)
      rate = r
      return write()
    },
    step(ms) {
      if (!Number.isFinite(ms)) throw new RangeError(`clock step must be a finite number of ms, got ${ms}`)
      offsetMs += ms
      return write()
    },
    reset() {
      rate = 1
      offsetMs = 0
      epoch++ // the shim re-anchors at the real time
      return write()
    },
  }
}
