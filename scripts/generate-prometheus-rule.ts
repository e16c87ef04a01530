import { writeFile } from 'node:fs/promises'
import { generatePrometheusRule, prometheusRulePath } from './prometheus-rule.js'

await writeFile(prometheusRulePath, await generatePrometheusRule())
console.log(`wrote ${prometheusRulePath.pathname}`)
