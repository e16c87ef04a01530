import t from 'tap'
import { parseOptions, reproduceCommand, serviceSettings, UsageError } from '../../chaos/options.js'
import { schedule } from '../../chaos/nemesis.js'
import { scenarios } from '../../chaos/scenarios.js'

t.test('--faults: only the named faults of the scenario are drawn, and the reproduce line keeps them', async (t) => {
  const o = parseOptions(['--seed', '4', '--duration', '30s', '--faults', 'latency,pause-service'])
  t.same(o.faults, ['latency', 'pause-service'])
  t.match(reproduceCommand(o), / --faults latency,pause-service /)
  const plans = schedule({ ...o, scenario: scenarios.safe, settings: serviceSettings(o.serviceEnv) })
  t.ok(plans.length > 0)
  t.same([...new Set(plans.map((p) => p.kind))].sort(), ['latency', 'pause-service'])
})

t.test('the default schedule of safe includes the faults beyond cuts, on 1 node too', async (t) => {
  for (const nodes of ['1', '3']) {
    const o = parseOptions(['--seed', '7', '--duration', '10m', '--nodes', nodes])
    t.equal(o.faults, undefined)
    const kinds = new Set(schedule({ ...o, scenario: scenarios.safe, settings: serviceSettings(o.serviceEnv) }).map((p) => p.kind))
    for (const k of ['latency', 'slow-redis', 'pause-service']) t.ok(kinds.has(k as never), `${k} on ${nodes} node(s)`)
  }
})

t.test('--faults refuses a fault the scenario does not draw, or an empty list', async (t) => {
  const refused = (argv: string[]) => {
    try {
      parseOptions(argv)
    } catch (err) {
      return err instanceof UsageError && /^--faults takes a list of safe's faults/.test(err.message)
    }
    return false
  }
  t.ok(refused(['--faults', 'latency,kill-node', '--nodes', '1']), 'kill-node is not drawn on 1 node')
  t.ok(refused(['--faults', 'no-such-fault']))
  t.ok(refused(['--faults', ',']))
})

t.test('a latency fault slows a link (0–300 ms each way): it does not stop its replica', async (t) => {
  const o = parseOptions(['--seed', '3', '--duration', '10m', '--replicas', '2', '--faults', 'latency,pause-service'])
  const plans = schedule({ ...o, scenario: scenarios.safe, settings: serviceSettings(o.serviceEnv) })
  const latency = plans.filter((p) => p.kind === 'latency')
  t.ok(latency.length > 0)
  for (const p of latency) {
    const { up, down } = p.latency!
    t.ok(up.ms >= 0 && up.ms <= 300 && down.ms >= 0 && down.ms <= 300, p.detail)
  }
  // With two replicas at most one may be stopped at once: a pause alongside a latency fault on the other replica is allowed.
  const alongside = plans.some(
    (p) =>
      p.kind === 'pause-service' &&
      latency.some((l) => l.replicas[0] !== p.replicas[0] && l.at < p.at + p.durationMs && p.at < l.at + l.durationMs),
  )
  t.ok(alongside, 'a replica paused while the other one has a slow link')
})
