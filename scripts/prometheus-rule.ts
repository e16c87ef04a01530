import { readFile } from 'node:fs/promises'
import YAML from 'yaml'

/** The one source of the alert rules, and the Prometheus Operator copy made from it. */
export const alertsPath = new URL('../deploy/prometheus/alerts.yml', import.meta.url)
export const prometheusRulePath = new URL('../deploy/kubernetes/base/prometheusrule.yaml', import.meta.url)

const header = `# GENERATED from deploy/prometheus/alerts.yml by \`npm run prometheus-rule\`: edit that file, then
# run it again (a test fails while the two differ). The same rules as a Prometheus Operator PrometheusRule.
`

/** deploy/prometheus/alerts.yml's groups, as the spec of a PrometheusRule named lock-service. */
export async function generatePrometheusRule(): Promise<string> {
  const rules = YAML.parse(await readFile(alertsPath, 'utf8')) as { groups: unknown[] }
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'lock-service',
      labels: { 'app.kubernetes.io/name': 'lock-service', 'app.kubernetes.io/part-of': 'lock-service' },
    },
    spec: { groups: rules.groups },
  }
  return header + YAML.stringify(rule, { lineWidth: 0 })
}
