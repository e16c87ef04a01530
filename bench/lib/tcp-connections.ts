/**
 * How many TCP connections a process holds open to given ports, from Linux /proc: the process's
 * socket inodes (/proc/<pid>/fd) matched against the kernel's TCP tables (/proc/<pid>/net/tcp, tcp6).
 * The scale scenario uses it to count each service replica's connections to each Redis master.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

const ESTABLISHED = '01'

/** Established connections from process `pid` to each of `ports` (on any address), by port. */
export function connectionsTo(pid: number, ports: readonly number[]): Map<number, number> {
  const counts = new Map(ports.map((p) => [p, 0]))
  const inodes = socketInodes(pid)
  for (const table of ['tcp', 'tcp6']) {
    const text = readTable(pid, table)
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const [, , remote = '', state, , , , , , inode = ''] = f
      if (state !== ESTABLISHED || !inodes.has(inode)) continue
      const port = parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16)
      const n = counts.get(port)
      if (n !== undefined) counts.set(port, n + 1)
    }
  }
  return counts
}

function readTable(pid: number, table: string): string {
  try {
    return readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
  } catch {
    return '' // no IPv6 here
  }
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m?.[1]) inodes.add(m[1])
    } catch {
      // closed meanwhile
    }
  }
  return inodes
}
