/**
 * deploy/kubernetes, checked without a cluster: each overlay renders (test/helpers/kustomize.ts, and
 * `kubectl kustomize` where a recent kubectl is installed, which must print the same objects); every
 * object is valid against the Kubernetes (and Prometheus Operator) schemas of the kubernetes-models
 * packages, and has no field those schemas lack (a TypeScript excess-property check on their types);
 * the service's environment is one src/config.ts accepts and points at Redis objects of the overlay;
 * probes, drain, security and selectors agree with the service; the PrometheusRule is alerts.yml.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import YAML from 'yaml'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Service } from 'kubernetes-models/v1/Service'
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'
import { configEnvNames, loadConfig } from '../../src/config.js'
import { serviceNodeFlags } from '../../harness/start-command.js'
import { freePort, startRedis } from '../../harness/redis-server.js'
import { generatePrometheusRule } from '../../scripts/prometheus-rule.js'
import { execProbe } from '../helpers/exec-probe.js'
import { applyJsonPatch, kustomize, type Manifest } from '../helpers/kustomize.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const k8sDir = path.join(root, 'deploy/kubernetes')
const overlays = ['single', 'quorum', 'cluster'] as const
const rendered = new Map(overlays.map((o) => [o, kustomize(path.join(k8sDir, 'overlays', o))]))
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8')

/** Each kind we ship: its model (runtime JSON-schema validation) and where its TypeScript type lives. */
const models: Record<string, { model: { new (data: never): { validate(): void } }; types: string; iface: string }> = {
  'v1/ConfigMap': { model: ConfigMap, types: 'kubernetes-models/v1/ConfigMap', iface: 'IConfigMap' },
  'v1/Service': { model: Service, types: 'kubernetes-models/v1/Service', iface: 'IService' },
  'v1/ServiceAccount': { model: ServiceAccount, types: 'kubernetes-models/v1/ServiceAccount', iface: 'IServiceAccount' },
  'apps/v1/Deployment': { model: Deployment, types: 'kubernetes-models/apps/v1/Deployment', iface: 'IDeployment' },
  'apps/v1/StatefulSet': { model: StatefulSet, types: 'kubernetes-models/apps/v1/StatefulSet', iface: 'IStatefulSet' },
  'batch/v1/Job': { model: Job, types: 'kubernetes-models/batch/v1/Job', iface: 'IJob' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    types: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    iface: 'IHorizontalPodAutoscaler',
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    model: NetworkPolicy,
    types: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy',
    iface: 'INetworkPolicy',
  },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    types: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    iface: 'IPodDisruptionBudget',
  },
  'monitoring.coreos.com/v1/PrometheusRule': {
    model: PrometheusRule,
    types: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
    iface: 'IPrometheusRule',
  },
  'monitoring.coreos.com/v1/ServiceMonitor': {
    model: ServiceMonitor,
    types: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
    iface: 'IServiceMonitor',
  },
}

const typeKey = (m: Manifest) => `${m.apiVersion}/${m.kind}`
const idOf = (m: Manifest) => `${m.kind}/${m.metadata.name}`

/** JSON-schema validation: the error text, or undefined when valid. */
function schemaError(m: Manifest): string | undefined {
  const entry = models[typeKey(m)]
  if (!entry) return `no schema for ${typeKey(m)}`
  try {
    new entry.model(structuredClone(m) as never).validate()
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/**
 * The TypeScript check: each object as a literal of its kind's type, in one program. Returns the
 * diagnostics by object (an excess property is a field the schema does not have; a wrong type too).
 */
function typeErrors(objects: { label: string; manifest: Manifest }[]): Map<string, string[]> {
  const file = path.join(root, 'test/ops/kubernetes-manifests.generated.ts')
  const used = [...new Set(objects.map((o) => typeKey(o.manifest)))]
  const lines = used.map((key, i) => `import type { ${models[key]?.iface} as T${i} } from '${models[key]?.types}'`)
  const starts: { label: string; start: number }[] = []
  let text = lines.join('\n') + '\n'
  objects.forEach(({ label, manifest }, i) => {
    starts.push({ label, start: text.length })
    text += `export const m${i}: T${used.indexOf(typeKey(manifest))} = ${JSON.stringify(manifest, null, 1)}\n`
  })
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    // No DOM and no @types: the manifests' types need only the language's own.
    lib: ['lib.es5.d.ts'],
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest)
  host.fileExists = (name) => name === file || fileExists(name)
  const program = ts.createProgram([file], options, host)
  const errors = new Map<string, string[]>()
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const at = d.file?.fileName === file ? (d.start ?? 0) : -1
    const label = at < 0 ? '(types)' : ([...starts].reverse().find((s) => s.start <= at)?.label ?? '(imports)')
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0] ?? ''
    errors.set(label, [...(errors.get(label) ?? []), message])
  }
  return errors
}

interface Container {
  name: string
  image: string
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: unknown } }[]
  ports?: { name?: string; containerPort: number }[]
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> }
  securityContext?: Record<string, unknown>
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[]
  readinessProbe?: { httpGet?: { path: string; port: string | number } }
  livenessProbe?: { httpGet?: { path: string; port: string | number } }
  startupProbe?: { httpGet?: { path: string; port: string | number } }
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } }
}
interface PodTemplate {
  metadata: { labels: Record<string, string> }
  spec: {
    containers: Container[]
    securityContext?: Record<string, unknown>
    terminationGracePeriodSeconds?: number
    volumes?: { name: string; secret?: { secretName: string; items?: { key: string; path: string }[] }; [k: string]: unknown }[]
    affinity?: { podAntiAffinity?: unknown }
  }
}

const podTemplate = (m: Manifest): PodTemplate | undefined =>
  ['Deployment', 'StatefulSet', 'Job'].includes(m.kind) ? (m.spec as { template: PodTemplate }).template : undefined
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v)
const byKind = (objects: Manifest[], kind: string) => objects.filter((m) => m.kind === kind)
const lockService = (objects: Manifest[]) => objects.find((m) => m.kind === 'Deployment' && m.metadata.name === 'lock-service') as Manifest

t.test('the renderer: JSON patches, and fields it does not know', async (t) => {
  const doc = { a: { list: [1, 2] } }
  applyJsonPatch(doc, { op: 'add', path: '/a/list/-', value: 3 })
  applyJsonPatch(doc, { op: 'add', path: '/a/b~1c', value: 'x' })
  applyJsonPatch(doc, { op: 'replace', path: '/a/list/0', value: 0 })
  applyJsonPatch(doc, { op: 'remove', path: '/a/list/1' })
  t.same(doc, { a: { list: [0, 3], 'b/c': 'x' } })
  t.throws(() => applyJsonPatch(doc, { op: 'replace', path: '/a/nothing', value: 1 }), /does not exist/)
  t.throws(() => applyJsonPatch(doc, { op: 'add', path: '/x/y', value: 1 }), /does not exist/)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kustomize-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(path.join(dir, 'kustomization.yaml'), 'resources: []\ncommonLabels: { a: b }\n')
  t.throws(() => kustomize(dir), /does not know commonLabels/)
})

t.test('each overlay renders the same objects as kubectl kustomize (where a kubectl with kustomize 5 is installed)', async (t) => {
  let kubectl: string | undefined
  try {
    kubectl = execFileSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 10_000 })
  } catch {
    kubectl = undefined
  }
  const kustomizeMajor = Number(/Kustomize Version: v(\d+)/.exec(kubectl ?? '')?.[1] ?? 0)
  for (const overlay of overlays) {
    const ours = rendered.get(overlay) ?? []
    t.ok(ours.length > 0, `${overlay}: renders`)
    t.same(
      ours.filter((m) => m.metadata.namespace !== 'lock-service').map(idOf),
      [],
      `${overlay}: every object in the lock-service namespace`,
    )
    if (kustomizeMajor < 5) continue
    const printed = execFileSync('kubectl', ['kustomize', path.join(k8sDir, 'overlays', overlay)], { encoding: 'utf8', timeout: 30_000 })
    const theirs = YAML.parseAllDocuments(printed).map((d) => d.toJS() as Manifest)
    const key = (m: Manifest) => `${typeKey(m)}/${m.metadata.name}`
    t.strictSame(
      new Map(ours.map((m) => [key(m), m])),
      new Map(theirs.map((m) => [key(m), m])),
      `${overlay}: as kubectl kustomize prints it`,
    )
  }
  if (kustomizeMajor < 5) t.comment('no kubectl with kustomize 5 on the PATH: rendered by test/helpers/kustomize.ts only')
})

t.test('every object of every overlay is valid against its schema', async (t) => {
  for (const overlay of overlays) {
    for (const m of rendered.get(overlay) ?? []) t.equal(schemaError(m), undefined, `${overlay}: ${typeKey(m)} ${m.metadata.name}`)
  }
  const broken = structuredClone(lockService(rendered.get('single') ?? []))
  applyJsonPatch(broken, { op: 'replace', path: '/spec/template/spec/containers/0/ports/0/containerPort', value: 'eighty' })
  t.match(schemaError(broken), /containerPort must be integer/, 'a wrong type fails the schema')
})

t.test('no object has a field its schema lacks, or a value of the wrong type (TypeScript types of the same schemas)', async (t) => {
  // The base's objects come out of the three overlays alike: each distinct object once.
  const distinct = new Map<string, { label: string; manifest: Manifest }>()
  for (const o of overlays) {
    for (const manifest of rendered.get(o) ?? []) {
      const text = JSON.stringify(manifest)
      if (!distinct.has(text)) distinct.set(text, { label: `${o}: ${idOf(manifest)}`, manifest })
    }
  }
  const objects = [...distinct.values()]
  const typo = structuredClone(lockService(rendered.get('single') ?? []))
  const container = (typo.spec as { template: PodTemplate }).template.spec.containers[0] as unknown as Record<string, unknown>
  container.readinesProbe = container.readinessProbe
  delete container.readinessProbe
  const errors = typeErrors([...objects, { label: 'misspelled', manifest: typo }])
  t.match(errors.get('misspelled'), [/'"?readinesProbe"?' does not exist/], 'a misspelled field is caught')
  errors.delete('misspelled')
  t.same(Object.fromEntries(errors), {}, `${objects.length} objects, no error`)
})

/** The service's env with secrets filled in; the names that only feed $(NAME) references. */
function resolvedEnv(container: Container): { env: Record<string, string>; helpers: string[]; unresolved: string[] } {
  const env: Record<string, string> = {}
  const unresolved: string[] = []
  for (const e of container.env ?? []) {
    const raw = e.value ?? (e.valueFrom?.secretKeyRef ? 'Secret0from0k8s' : '')
    env[e.name] = raw.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => {
      if (env[name] === undefined) unresolved.push(`${e.name} uses ${name} before it is defined`)
      return env[name] ?? whole
    })
  }
  const referenced = (container.env ?? []).flatMap((e) => [...(e.value ?? '').matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1]))
  // NODE_OPTIONS is read by node itself.
  const helpers = Object.keys(env).filter((name) => !configEnvNames.includes(name) && name !== 'NODE_OPTIONS')
  return { env, helpers: helpers.filter((h) => !referenced.includes(h)), unresolved }
}

t.test('the service: environment src/config.ts accepts, Redis objects of the overlay, secrets mounted', async (t) => {
  const expected = { single: ['standalone', 1], quorum: ['standalone', 3], cluster: ['cluster', 1] } as const
  const dir = mkdtempSync(path.join(os.tmpdir(), 'k8s-auth-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const keysFile = path.join(dir, 'keys.json')
  writeFileSync(keysFile, JSON.stringify({ keys: [{ name: 'ops', secretSha256: 'a'.repeat(64), admin: true }] }))
  for (const overlay of overlays) {
    const objects = rendered.get(overlay) ?? []
    const pod = podTemplate(lockService(objects)) as PodTemplate
    const container = pod.spec.containers[0] as Container
    const { env, helpers, unresolved } = resolvedEnv(container)
    t.same(unresolved, [], `${overlay}: every $(NAME) is defined before it is used`)
    t.same(helpers, [], `${overlay}: every variable is one src/config.ts reads, or feeds one through $(NAME)`)

    // AUTH_FILE: the file of a Secret mounted read-only.
    const authFile = env.AUTH_FILE ?? ''
    const mount = container.volumeMounts?.find((m) => path.dirname(authFile) === m.mountPath)
    const volume = pod.spec.volumes?.find((v) => v.name === mount?.name)
    t.ok(mount?.readOnly, `${overlay}: AUTH_FILE ${authFile} is in a read-only mount`)
    t.ok(
      volume?.secret?.items?.some((i) => i.path === path.basename(authFile)),
      `${overlay}: from Secret ${volume?.secret?.secretName}, as ${path.basename(authFile)}`,
    )

    const config = loadConfig({
      ...Object.fromEntries(Object.entries(env).filter(([k]) => configEnvNames.includes(k))),
      AUTH_FILE: keysFile,
    })
    t.equal(config.redisMode, expected[overlay][0], `${overlay}: REDIS_MODE`)
    const ports = container.ports?.map((p) => p.containerPort) ?? []
    t.ok(ports.includes(config.port), `${overlay}: the container port is the service's PORT ${config.port}`)

    const nodes = config.redisMode === 'cluster' ? 1 : config.redisUrls.length
    t.equal(nodes, expected[overlay][1], `${overlay}: ${nodes} voting Redis node(s)`)
    for (const url of config.redisUrls) {
      const { hostname, port, password } = new URL(url)
      t.equal(password, 'Secret0from0k8s', `${overlay}: ${hostname}: the password from the Secret`)
      t.ok(redisPodsBehind(objects, hostname).length > 0, `${overlay}: ${hostname}:${port} is a Redis of the overlay`)
    }
    // The Redis side uses the same Secret and key for its password.
    const serviceSecret = container.env?.find((e) => e.name === 'REDIS_AUTH_FOR_URLS')?.valueFrom?.secretKeyRef
    for (const redis of objects.filter((m) => podTemplate(m)?.metadata.labels['app.kubernetes.io/component'] === 'redis')) {
      const redisContainer = podTemplate(redis)?.spec.containers[0]
      const args = ((redisContainer as unknown as { args?: string[] }).args ?? []).join(' ')
      t.match(args, /--requirepass \$\(REDIS_PASSWORD\)/, `${overlay}: ${idOf(redis)} requires the password`)
      t.same(
        redisContainer?.env?.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef,
        serviceSecret,
        `${overlay}: ${idOf(redis)}: from the Secret the service reads`,
      )
    }
  }
})

/** Pod templates a Redis host name reaches: a Service's name, or <statefulset>-<i>.<headless service>. */
function redisPodsBehind(objects: Manifest[], host: string): PodTemplate[] {
  const [first = '', governing] = host.split('.')
  const serviceName = governing ?? first
  const service = objects.find((m) => m.kind === 'Service' && m.metadata.name === serviceName)
  if (!service) return []
  const selector = (service.spec as { selector: Record<string, string> }).selector
  const pods = objects
    .filter((m) => {
      if (governing === undefined) return true
      const spec = m.spec as { serviceName?: string; replicas?: number }
      const ordinal = Number(first.slice(m.metadata.name.length + 1))
      return (
        m.kind === 'StatefulSet' &&
        spec.serviceName === serviceName &&
        first.startsWith(`${m.metadata.name}-`) &&
        ordinal < (spec.replicas ?? 1)
      )
    })
    .map(podTemplate)
    .filter((p): p is PodTemplate => p !== undefined && matches(selector, p.metadata.labels))
  return pods.filter((p) => p.spec.containers.some((c) => /^redis:7/.test(c.image) && c.ports?.some((port) => port.containerPort === 6379)))
}

t.test('quorum: a Redis is ready once past the restart quarantine; a drain takes one at a time; traffic does not wait', async (t) => {
  const objects = rendered.get('quorum') ?? []
  const service = (podTemplate(lockService(objects)) as PodTemplate).spec.containers[0] as Container
  const { env } = resolvedEnv(service)
  const config = loadConfig({ ...Object.fromEntries(Object.entries(env).filter(([k]) => configEnvNames.includes(k) && k !== 'AUTH_FILE')) })
  const quarantineSeconds = Math.ceil(((config.maxTtlMs + config.maxLockDelayMs) * (1 + config.driftFactor)) / 1000) + 2
  for (const url of config.redisUrls) {
    const host = new URL(url).hostname
    const svc = objects.find((m) => m.kind === 'Service' && m.metadata.name === host)
    t.equal((svc?.spec as { publishNotReadyAddresses?: boolean }).publishNotReadyAddresses, true, `${host}: reached while not ready`)
    const [pod] = redisPodsBehind(objects, host)
    const redis = pod?.spec.containers[0] as Container & { readinessProbe?: { exec?: { command: string[] } } }
    const seconds = Number(redis.env?.find((e) => e.name === 'QUARANTINE_SECONDS')?.value)
    t.ok(
      seconds >= quarantineSeconds,
      `${host}: ready after ${seconds} s ≥ (MAX_TTL_MS + MAX_LOCK_DELAY_MS) × (1 + DRIFT_FACTOR) + 2 s = ${quarantineSeconds} s`,
    )
    t.match(redis.readinessProbe?.exec?.command.join(' '), /uptime_in_seconds.*QUARANTINE_SECONDS/, `${host}: the readiness probe reads it`)
  }
  const budgets = byKind(objects, 'PodDisruptionBudget').filter((b) => b.metadata.name === 'redis')
  const budget = budgets[0]?.spec as { maxUnavailable: number; selector: { matchLabels: Record<string, string> } }
  t.equal(budget.maxUnavailable, 1, 'one master at a time')
  const covered = objects.filter(
    (m) => m.kind === 'StatefulSet' && matches(budget.selector.matchLabels, podTemplate(m)?.metadata.labels ?? {}),
  )
  t.same(covered.map(idOf), ['StatefulSet/redis-1', 'StatefulSet/redis-2', 'StatefulSet/redis-3'], 'over all three')
})

t.test('the quorum readiness probe, run against a real Redis', async (t) => {
  const objects = rendered.get('quorum') ?? []
  const [pod] = redisPodsBehind(objects, 'redis-1')
  const command = (pod?.spec.containers[0] as { readinessProbe?: { exec?: { command: string[] } } }).readinessProbe?.exec?.command ?? []
  const redis = await startRedis({ t })
  const run = execProbe(t, command)
  const probe = (port: number, quarantine: number) => run(port, { QUARANTINE_SECONDS: String(quarantine) })
  t.equal(probe(redis.port, 0), 0, 'ready once up for the quarantine')
  t.not(probe(redis.port, 100_000), 0, 'not ready before')
  t.not(probe(await freePort(), 0), 0, 'not ready when Redis does not answer')
})

t.test('probes, drain on SIGTERM, resources and node flags as the service expects', async (t) => {
  const routes = new Set(Object.keys((YAML.parse(read('openapi.yaml')) as { paths: Record<string, unknown> }).paths))
  const server = read('src/server.ts')
  const drainMs = Number(/shutdown took too long[\s\S]*?\},\s*([\d_]+)\)/.exec(server)?.[1]?.replaceAll('_', ''))
  t.ok(drainMs > 0, `src/server.ts bounds its drain on SIGTERM (${drainMs} ms)`)
  const pod = podTemplate(lockService(rendered.get('single') ?? [])) as PodTemplate
  const c = pod.spec.containers[0] as Container
  t.equal(c.readinessProbe?.httpGet?.path, '/readyz', 'ready = a majority of its Redis nodes may vote')
  t.equal(c.livenessProbe?.httpGet?.path, '/healthz', 'alive = the process answers (not Redis)')
  for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
    t.ok(routes.has(probe?.httpGet?.path ?? ''), `${probe?.httpGet?.path} is a route`)
    t.ok(
      c.ports?.some((p) => p.name === probe?.httpGet?.port),
      `on the named port ${probe?.httpGet?.port}`,
    )
  }
  const preStop = c.lifecycle?.preStop?.exec?.command
  t.same(preStop?.slice(0, 1), ['sleep'], 'preStop sleeps while the endpoint removal spreads')
  const preStopSeconds = Number(preStop?.[1])
  const grace = pod.spec.terminationGracePeriodSeconds ?? 30
  t.ok(preStopSeconds >= 2, `preStop ${preStopSeconds} s`)
  t.ok(
    grace >= preStopSeconds + drainMs / 1000,
    `terminationGracePeriodSeconds ${grace} ≥ preStop ${preStopSeconds} s + drain ${drainMs / 1000} s`,
  )
  const nodeOptions = c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value?.split(/\s+/) ?? []
  for (const flag of serviceNodeFlags()) t.ok(nodeOptions.includes(flag), `NODE_OPTIONS has ${flag}, as npm start`)
  const oldSpace = Number(nodeOptions.find((f) => f.startsWith('--max-old-space-size='))?.split('=')[1])
  const limitMi = Number(/^(\d+)Mi$/.exec(c.resources?.limits?.memory ?? '')?.[1])
  t.ok(oldSpace > 0 && oldSpace < limitMi * 0.8, `old space ${oldSpace} MB leaves room under the ${limitMi} Mi limit`)
  for (const r of ['cpu', 'memory']) {
    t.ok(c.resources?.requests?.[r], `requests ${r}`)
    t.ok(c.resources?.limits?.[r], `limits ${r}`)
  }
  t.ok(pod.spec.affinity?.podAntiAffinity, 'replicas spread over nodes (pod anti-affinity)')
})

t.test('every pod: non-root, read-only root filesystem, no privilege escalation, no capabilities', async (t) => {
  for (const overlay of overlays) {
    for (const m of rendered.get(overlay) ?? []) {
      const pod = podTemplate(m)
      if (!pod) continue
      const id = `${overlay}: ${idOf(m)}`
      t.equal(pod.spec.securityContext?.runAsNonRoot, true, `${id}: runAsNonRoot`)
      t.ok(Number(pod.spec.securityContext?.runAsUser) > 0, `${id}: a numeric non-root user`)
      t.equal((pod.spec as { automountServiceAccountToken?: boolean }).automountServiceAccountToken, false, `${id}: no API token`)
      for (const c of pod.spec.containers) {
        t.equal(c.securityContext?.readOnlyRootFilesystem, true, `${id}/${c.name}: read-only root filesystem`)
        t.equal(c.securityContext?.allowPrivilegeEscalation, false, `${id}/${c.name}: no privilege escalation`)
        t.same(
          (c.securityContext?.capabilities as { drop?: string[] } | undefined)?.drop,
          ['ALL'],
          `${id}/${c.name}: drops every capability`,
        )
        t.ok(c.resources?.requests && c.resources.limits, `${id}/${c.name}: requests and limits`)
      }
    }
  }
})

t.test('selectors: each Service, budget, autoscaler, policy and monitor finds its pods', async (t) => {
  for (const overlay of overlays) {
    const objects = rendered.get(overlay) ?? []
    const pods = objects.map((m) => ({ m, pod: podTemplate(m) })).filter((p): p is { m: Manifest; pod: PodTemplate } => p.pod !== undefined)
    const selected = (selector: Record<string, string>) =>
      pods.filter((p) => matches(selector, p.pod.metadata.labels)).map((p) => idOf(p.m))
    for (const m of objects) {
      const spec = m.spec as Record<string, unknown>
      const sel =
        m.kind === 'Service'
          ? (spec.selector as Record<string, string>)
          : m.kind === 'PodDisruptionBudget'
            ? (spec.selector as { matchLabels: Record<string, string> }).matchLabels
            : m.kind === 'NetworkPolicy'
              ? (spec.podSelector as { matchLabels: Record<string, string> }).matchLabels
              : undefined
      if (sel) t.ok(selected(sel).length > 0, `${overlay}: ${idOf(m)} selects ${selected(sel).join(', ')}`)
    }
    t.same(
      selected({ 'app.kubernetes.io/name': 'lock-service' }),
      ['Deployment/lock-service'],
      `${overlay}: only the service has its label`,
    )
    const redisPolicy = objects.find((m) => m.kind === 'NetworkPolicy' && m.metadata.name === 'lock-service-redis')
    const redisSelector = (redisPolicy?.spec as { podSelector: { matchLabels: Record<string, string> } }).podSelector.matchLabels
    const redises = pods.filter((p) => p.pod.spec.containers.some((c) => c.image.startsWith('redis:')) && p.m.kind !== 'Job')
    t.same(
      selected(redisSelector),
      redises.map((p) => idOf(p.m)),
      `${overlay}: the Redis policy covers every Redis, and only them`,
    )
    const hpa = byKind(objects, 'HorizontalPodAutoscaler')[0]?.spec as {
      scaleTargetRef: { kind: string; name: string }
      minReplicas: number
    }
    t.same(
      [hpa.scaleTargetRef.kind, hpa.scaleTargetRef.name],
      ['Deployment', 'lock-service'],
      `${overlay}: the autoscaler scales the service`,
    )
    t.ok(hpa.minReplicas >= 2, `${overlay}: at least 2 replicas, so the budget allows a drain`)
    const monitor = byKind(objects, 'ServiceMonitor')[0]?.spec as {
      selector: { matchLabels: Record<string, string> }
      endpoints: { port: string; path: string }[]
    }
    const monitored = byKind(objects, 'Service').filter((s) => matches(monitor.selector.matchLabels, s.metadata.labels ?? {}))
    t.same(monitored.map(idOf), ['Service/lock-service'], `${overlay}: the monitor scrapes the service`)
    const servicePorts = (monitored[0]?.spec as { ports: { name: string }[] }).ports.map((p) => p.name)
    t.ok(servicePorts.includes(monitor.endpoints[0]?.port ?? ''), `${overlay}: on its port ${monitor.endpoints[0]?.port}`)
    t.equal(monitor.endpoints[0]?.path, '/metrics')
  }
})

t.test('the PrometheusRule is deploy/prometheus/alerts.yml (npm run prometheus-rule)', async (t) => {
  t.equal(read('deploy/kubernetes/base/prometheusrule.yaml'), await generatePrometheusRule(), 'the file is what the script writes')
  const rule = YAML.parse(read('deploy/kubernetes/base/prometheusrule.yaml')) as { spec: { groups: unknown } }
  t.strictSame(
    rule.spec.groups,
    (YAML.parse(read('deploy/prometheus/alerts.yml')) as { groups: unknown }).groups,
    'the same groups and rules',
  )
})

t.test('docs/kubernetes.md says how to create every Secret the manifests read, and names every overlay', async (t) => {
  const docs = read('docs/kubernetes.md')
  const secrets = new Set<string>()
  for (const overlay of overlays) {
    for (const m of rendered.get(overlay) ?? []) {
      const pod = podTemplate(m)
      for (const v of pod?.spec.volumes ?? [])
        if (v.secret) for (const i of v.secret.items ?? []) secrets.add(`${v.secret.secretName} ${i.key}`)
      for (const c of pod?.spec.containers ?? []) {
        for (const e of c.env ?? [])
          if (e.valueFrom?.secretKeyRef) secrets.add(`${e.valueFrom.secretKeyRef.name} ${e.valueFrom.secretKeyRef.key}`)
      }
    }
    t.match(docs, `kubectl apply -k deploy/kubernetes/overlays/${overlay}`, `how to apply ${overlay}`)
  }
  t.ok(secrets.size >= 2, [...secrets].join('; '))
  for (const s of secrets) {
    const [name, key] = s.split(' ')
    t.match(docs, new RegExp(`kubectl create secret generic ${name}\\b[^\\n]*--from-[a-z]+=${key}=`), `creates Secret ${name} with ${key}`)
  }
  const shipped = readdirSync(path.join(k8sDir, 'overlays'))
  t.same(shipped.sort(), [...overlays].sort(), 'the overlays tested are the overlays shipped')
})
