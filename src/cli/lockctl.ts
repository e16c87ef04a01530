#!/usr/bin/env node
/**
 * lockctl: the lock service on the command line (`lockctl --help`). Server from LOCK_SERVICE_URL or
 * --url, API key from LOCK_SERVICE_KEY or --key (sent as a Bearer token, never printed); an https://
 * service's CA and a client certificate from --ca-file, --cert-file, --key-file (or LOCK_SERVICE_*_FILE).
 */
import { parse } from './args.js'
import { Client } from '@lock-service/client'
import { check } from './check.js'
import { acquire, list, release, renew, REQUEST_TIMEOUT_MS, status } from './commands.js'
import { CliError, EXIT } from './exit.js'
import { elect } from './elect.js'
import { leader, observe } from './observe.js'
import { runLocked } from './run.js'

const print = (line: string): void => {
  process.stdout.write(`${line}\n`)
}
const warn = (line: string): void => {
  process.stderr.write(`${line}\n`)
}

export async function main(argv: readonly string[], env: Record<string, string | undefined>): Promise<number> {
  try {
    const o = parse(argv, env)
    if (o.command === 'help') {
      print(o.text.trimEnd())
      return EXIT.ok
    }
    const client = new Client({
      url: o.url,
      apiKey: o.key,
      timeoutMs: REQUEST_TIMEOUT_MS,
      userAgent: 'lockctl',
      ...(o.tls ? { tls: o.tls } : {}),
    })
    switch (o.command) {
      case 'run':
        return await runLocked(client, o, warn)
      case 'acquire':
        return await acquire(client, o, print)
      case 'renew':
        return await renew(client, o, print)
      case 'release':
        return await release(client, o, print)
      case 'status':
        return await status(client, o, print)
      case 'list':
        return await list(client, o, print)
      case 'check':
        return await check(client, o, print)
      case 'elect':
        return await elect(client, o, warn)
      case 'leader':
        return await leader(client, o, print)
      case 'observe':
        return await observe(client, o, print, warn)
    }
  } catch (err) {
    if (err instanceof CliError) {
      warn(`lockctl: ${err.message}`)
      if (err.code === EXIT.usage && !err.message.includes('lockctl --help')) warn('lockctl: see lockctl --help')
      return err.code
    }
    warn(`lockctl: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    return EXIT.lockLost // EX_SOFTWARE
  }
}

const code = await main(process.argv.slice(2), process.env)
// Exit once what was written has been handed to the OS (this also drops fetch's idle keep-alive
// connections, which would otherwise keep the process alive for a few seconds).
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)))
