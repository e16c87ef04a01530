import net from 'node:net'
import { readRecords } from '../../harness/records.js'

/** One command as Redis' MONITOR reports it: who sent it ("lua" for a script's own calls) and its words. */
export interface MonitoredCommand {
  source: string
  args: string[]
}

/**
 * MONITOR on each of `ports` (plain sockets: no client library state to trip over while Redis streams
 * lines), collecting every command from now until close().
 */
export async function monitorRedis(ports: readonly number[]): Promise<{ commands: MonitoredCommand[]; close(): void }> {
  const commands: MonitoredCommand[] = []
  const sockets = await Promise.all(
    ports.map(
      (port) =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port })
          let started = false
          socket.once('error', reject)
          readRecords(socket, '\r\n', (line) => {
            if (!started) {
              // "+OK": monitoring from here on.
              started = true
              resolve(socket)
              return
            }
            // +1700000000.123456 [0 127.0.0.1:50000] "EVALSHA" "…" …   ("[0 lua]" for a script's calls)
            const parsed = /^\+\S+ \[\d+ ([^\]]+)\] (.*)$/.exec(line)
            if (!parsed) return
            const args = [...(parsed[2] ?? '').matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1'))
            commands.push({ source: parsed[1] ?? '', args })
          })
          socket.write('MONITOR\r\n')
        }),
    ),
  )
  return {
    commands,
    close: () => {
      for (const socket of sockets) socket.destroy()
    },
  }
}
