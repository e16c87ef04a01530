import YAML from 'yaml'
import { buildApp } from '../src/app.js'
import { configFrom } from '../src/config.js'
import { errorCodesOf } from '../src/http/schemas.js'

type Json = Record<string, unknown>

/**
 * The OpenAPI document, generated from the routes' zod schemas with the default limits (MAX_TTL_MS …).
 * `npm run openapi` writes it to openapi.yaml; a test fails when the two differ.
 */
export async function generateOpenapi(): Promise<string> {
  // No Redis is needed to describe the routes: an unreachable node, and no wait for it.
  const app = await buildApp(configFrom({ redisUrls: ['redis://127.0.0.1:1'], logLevel: 'silent', nodeTimeoutMs: 10 }), { documentation: true })
  try {
    await app.ready()
    const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Json>> }
    for (const operations of Object.values(doc.paths)) {
      for (const operation of Object.values(operations)) {
        optionalBody(operation)
        describeErrors(operation)
      }
    }
    dropUnreferencedSchemas(doc as unknown as Json)
    return `# Generated from the zod schemas in src/http by \`npm run openapi\`. Do not edit by hand.\n${YAML.stringify(doc, { lineWidth: 0 })}`
  } finally {
    await app.close()
  }
}

/** The zod transform also emits an input variant of each named schema; only the referenced ones stay. */
function dropUnreferencedSchemas(doc: Json): void {
  const schemas = (doc.components as { schemas?: Json } | undefined)?.schemas
  if (!schemas) return
  const text = JSON.stringify(doc.paths)
  for (const name of Object.keys(schemas)) if (!text.includes(`#/components/schemas/${name}"`)) delete schemas[name]
}

/** Error responses share one schema; their description names the error codes of the status. */
function describeErrors(operation: Json): void {
  const responses = operation.responses as Record<string, { description?: string }>
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) >= 400) response.description = errorCodesOf(Number(status))
  }
}

/**
 * Bodies are optional everywhere (empty = all defaults). The schemas accept null only because fastify
 * hands a missing body to the validator as null; a JSON `null` body is refused by the parser.
 */
function optionalBody(operation: Json): void {
  const body = operation.requestBody as { required?: boolean; description?: string; content: Record<string, { schema: Json }> } | undefined
  if (!body) return
  body.required = false
  body.description = 'Optional: an empty body means all defaults. Must be a JSON object when present.'
  for (const media of Object.values(body.content)) {
    const anyOf = media.schema.anyOf as Json[] | undefined
    if (anyOf) media.schema = anyOf.find((s) => s.type !== 'null') ?? media.schema
  }
}
