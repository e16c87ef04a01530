/**
 * Runs a Kubernetes exec probe's command here, against a test's redis-server: the probe calls plain
 * `redis-cli` (the pod's own Redis on 6379), so a `redis-cli` first on the PATH adds the test's port.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Teardown } from '../../harness/redis-server.js'

/** A function that runs `command` against Redis on `port`, with `env` added; its exit status. */
export function execProbe(t: Teardown, command: readonly string[]): (port: number, env?: Record<string, string>) => number {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'probe-'))
  t.teardown(() => rmSync(bin, { recursive: true, force: true }))
  const realCli = execFileSync('sh', ['-c', 'command -v redis-cli'], { encoding: 'utf8' }).trim()
  writeFileSync(path.join(bin, 'redis-cli'), `#!/bin/sh\nexec ${realCli} -p "$PROBE_PORT" "$@"\n`, { mode: 0o755 })
  return (port, env = {}) => {
    try {
      execFileSync(command[0] ?? 'false', command.slice(1), {
        env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}`, PROBE_PORT: String(port) },
        stdio: 'ignore',
        timeout: 10_000,
      })
      return 0
    } catch (err) {
      return (err as { status?: number | null }).status ?? -1
    }
  }
}
