/**
 * What ships for Prometheus and Grafana works with what the service exports: the alert rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`), the dashboard is a Grafana
 * dashboard whose every query is valid PromQL, every metric either names is exported by a fresh
 * service, and docs/operations.md's table lists every metric. Also: the labelled series exist at 0 from start.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import YAML from 'yaml'
import { holdModes, nodeFailureReasons, quorumFailureReasons } from '../../src/contract/words.js'
import { acquireOutcomes, releaseOutcomes, renewOutcomes, waitOutcomes } from '../../src/metrics.js'
import { startRedisCluster } from '../../harness/redis-server.js'
import { startApp } from '../../harness/app.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))
const rulesFile = path.join(root, 'deploy/prometheus/alerts.yml')
const rulesTestFile = path.join(root, 'deploy/prometheus/alerts.test.yml')
const dashboardFile = path.join(root, 'deploy/grafana/lock-service.json')

interface Rule {
  record?: string
  alert?: string
  expr: string
}
interface Target {
  refId?: string
  expr?: string
}
interface Panel {
  id: number
  type: string
  title?: string
  gridPos?: { h: number; w: number; x: number; y: number }
  targets?: Target[]
  datasource?: { uid?: string }
}

const rules = (YAML.parse(await readFile(rulesFile, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
)
const dashboard = JSON.parse(await readFile(dashboardFile, 'utf8')) as {
  title: string
  uid: string
  schemaVersion: number
  panels: Panel[]
  templating: { list: { name: string; type: string }[] }
}
const dashboardExprs = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((target) => ({ panel: p.title ?? String(p.id), expr: target.expr ?? '' })),
)

/** Grafana's variables, replaced by values PromQL accepts. */
function withoutVariables(expr: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$(job|instance)/g, '.*')
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
])

/** The metric names a PromQL expression reads (strings, label matchers, ranges, groupings and functions left out). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?\b/gi, ' ')
  const names = new Set<string>()
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice((m.index ?? 0) + m[0].length).trimStart()
    if (after.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue
    names.add(m[0])
  }
  return [...names]
}

t.test('metricNames', async (t) => {
  t.same(metricNames('histogram_quantile(0.99, sum by (le, node) (rate(a_bucket{job=~"x"}[5m]))) > 0.05 and on (job) b_total'), [
    'a_bucket',
    'b_total',
  ])
  t.same(metricNames('lock_service:usable * 2 <= count by (job, instance) (redis_node_up == bool 1e-9)'), [
    'lock_service:usable',
    'redis_node_up',
  ])
})

t.test('promtool check rules: the alert rules are valid', async (t) => {
  const { stdout } = await run('promtool', ['check', 'rules', rulesFile])
  t.match(stdout, /SUCCESS: \d+ rules found/)
  const alerts = rules.filter((r) => r.alert).map((r) => r.alert)
  for (const wanted of [
    'LockServiceBackendUnavailable',
    'LockServiceMajorityAtRisk',
    'LockServiceRedisNodeQuarantined',
    'LockServiceContentionSpike',
    'LockServiceHandoffSlow',
  ]) {
    t.ok(alerts.includes(wanted), `${wanted} is defined`)
  }
})

t.test('promtool test rules: the alerts fire when they should, and only then', async (t) => {
  const { stdout } = await run('promtool', ['test', 'rules', rulesTestFile])
  t.match(stdout, /SUCCESS/)
  const tested = (
    YAML.parse(await readFile(rulesTestFile, 'utf8')) as { tests: { alert_rule_test?: { alertname: string }[] }[] }
  ).tests.flatMap((x) => x.alert_rule_test?.map((a) => a.alertname) ?? [])
  for (const rule of rules.filter((r) => r.alert)) t.ok(tested.includes(rule.alert ?? ''), `${rule.alert} has a unit test`)
})

t.test('the Grafana dashboard: well-formed, every query valid PromQL', async (t) => {
  t.equal(dashboard.title, 'lock-service')
  t.match(dashboard.uid, /^[a-zA-Z0-9_-]{1,40}$/)
  t.ok(dashboard.schemaVersion >= 30, `schemaVersion ${dashboard.schemaVersion}`)
  t.same(
    dashboard.templating.list.map((v) => [v.name, v.type]),
    [
      ['datasource', 'datasource'],
      ['job', 'query'],
      ['instance', 'query'],
    ],
  )
  const ids = dashboard.panels.map((p) => p.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  for (const panel of dashboard.panels) {
    t.ok(panel.gridPos && panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title}: placed within the 24-column grid`)
    if (panel.type === 'row') continue
    t.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: uses the data source variable`)
    t.ok((panel.targets ?? []).length > 0, `${panel.title}: has queries`)
    t.equal(new Set(panel.targets?.map((x) => x.refId)).size, panel.targets?.length, `${panel.title}: distinct refIds`)
  }
  const titles = dashboard.panels.map((p) => p.title ?? '').join(' | ')
  for (const wanted of [
    /Acquires per second/,
    /Acquire latency p50 \/ p99/,
    /Contention/,
    /Waiters/,
    /Wait time/,
    /Hand-off latency/,
    /Node up and voting/,
    /Node command latency/,
    /Node errors/,
    /quarantine/i,
    /503/,
  ]) {
    t.match(titles, wanted, `a panel for ${wanted.source}`)
  }

  // promtool parses PromQL: every query becomes a recording rule of a scratch rule file.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lock-service-dashboard-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'dashboard-queries.yml')
  const scratch = {
    groups: [
      { name: 'dashboard', rules: dashboardExprs.map((q, i) => ({ record: `dashboard:query_${i}`, expr: withoutVariables(q.expr) })) },
    ],
  }
  await writeFile(file, YAML.stringify(scratch))
  const { stdout } = await run('promtool', ['check', 'rules', file])
  t.match(stdout, new RegExp(`SUCCESS: ${dashboardExprs.length} rules found`), `${dashboardExprs.length} queries parse`)
})

t.test('every metric the dashboard and the rules name is exported from start; docs/operations.md lists every metric', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
  )
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const exported = new Set<string>()
  const types = new Map<string, string>()
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type = ''] = m
    types.set(name, type)
    exported.add(name)
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name + suffix)
  }
  const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])))
  const named = [
    ...dashboardExprs.map((q) => ({ where: `dashboard "${q.panel}"`, expr: q.expr })),
    ...rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr })),
  ]
  for (const { where, expr } of named) {
    for (const name of metricNames(expr)) {
      t.ok(exported.has(name) || recorded.has(name), `${where}: ${name} is exported (or recorded by the rules)`)
      // A series the service exports at 0 from start: the query has data before any traffic.
      if (!recorded.has(name)) t.match(text, new RegExp(`^${name}[{ ]`, 'm'), `${where}: ${name} has a series at start`)
    }
  }

  const metricsDoc = await readFile(path.join(root, 'docs/operations.md'), 'utf8')
  const own = [...types.keys()].filter((n) => !/^(process_|nodejs_)/.test(n))
  for (const name of own)
    t.match(
      metricsDoc,
      new RegExp(`^\\| \`${name}\` \\| ${types.get(name)} \\|`, 'm'),
      `docs/operations.md's metric table: ${name} (${types.get(name)})`,
    )
})

t.test('/metrics from second one: every series with known labels is there at 0', async (t) => {
  const nodes = await startRedisCluster(3, { t })
  const { app } = await startApp(
    t,
    nodes.map((n) => n.url),
  )
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const has = (series: string) => t.match(text, new RegExp(`^${series.replace(/[{}+.]/g, '\\$&')} 0$`, 'm'), series)
  for (const mode of holdModes) {
    has(`lock_contention_total{mode="${mode}"}`)
    for (const outcome of acquireOutcomes) has(`lock_acquire_duration_seconds_bucket{le="+Inf",mode="${mode}",outcome="${outcome}"}`)
    for (const outcome of renewOutcomes) has(`lock_renewals_total{mode="${mode}",outcome="${outcome}"}`)
    for (const outcome of releaseOutcomes) has(`lock_releases_total{mode="${mode}",outcome="${outcome}"}`)
    for (const outcome of waitOutcomes) has(`lock_wait_duration_seconds_count{mode="${mode}",outcome="${outcome}"}`)
  }
  for (const reason of quorumFailureReasons) has(`lock_quorum_failures_total{reason="${reason}"}`)
  for (const node of ['0', '1', '2']) {
    t.match(
      text,
      new RegExp(`^redis_node_command_duration_seconds_bucket\\{le="0.001",node="${node}"\\} \\d+$`, 'm'),
      `node ${node}: latency buckets`,
    )
    has(`redis_node_restarts_total{node="${node}"}`)
    has(`redis_node_quarantine_seconds{node="${node}"}`)
    for (const reason of nodeFailureReasons) has(`redis_node_errors_total{node="${node}",reason="${reason}"}`)
  }
  has('http_request_duration_seconds_count{method="POST",route="/locks/:key",status_class="5xx"}')
  has('http_request_duration_seconds_count{method="GET",route="/readyz",status_class="5xx"}')
  has('lock_handoff_seconds_count')
  has('lock_waiters')
})
