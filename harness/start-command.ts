/**
 * How the service is started in production: package.json's `start` script, `node [flags]
 * dist/server.js`. The Dockerfile and scripts/serve.sh run it the same way (test/ops/container.test.ts
 * checks that), and the benchmarks start every server with the same flags.
 */
import { readFileSync } from 'node:fs'

const packageJson = new URL('../package.json', import.meta.url)

/** The node flags of the start script (e.g. `--max-semi-space-size=32`). */
export function serviceNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? ''
  const match = /^node((?: --[\w-]+(?:=\S+)?)*) dist\/server\.js$/.exec(start)
  if (!match) throw new Error(`package.json's start script should be "node [--flag …] dist/server.js", not "${start}"`)
  return (match[1] ?? '').split(' ').filter(Boolean)
}
