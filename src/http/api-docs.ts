import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { OpenAPIV3 } from 'openapi-types'
import YAML from 'yaml'

export interface ApiDocsOptions {
  /** openapi.yaml: the file GET /openapi.yaml serves. */
  openapiPath: URL
}

/**
 * The browser loads the page's scripts, styles and document from this service only, and "Try it out" may
 * call only the origin the page came from (a server other than that one is refused by the browser).
 */
const CSP = {
  'default-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'frame-ancestors': ["'self'"],
}

/**
 * GET /docs: an API reference page (Swagger UI, its assets served from node_modules) on openapi.yaml.
 * Open without an API key, like /openapi.yaml; "Try it out" sends the key given to Authorize.
 */
export async function apiDocsRoutes(app: FastifyInstance, { openapiPath }: ApiDocsOptions): Promise<void> {
  // Every route of the page (its assets, the document) is open, like /openapi.yaml.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: 'public' }
  })
  // Filled on the first visit rather than at start-up: parsing openapi.yaml takes a tenth of a second or more,
  // and most processes never serve /docs. The swagger decorator hands out this very object.
  const document = {} as OpenAPIV3.Document
  let loaded: Promise<unknown> | undefined
  app.addHook('onRequest', async () => {
    loaded ??= readFile(openapiPath, 'utf8').then(
      (text) => Object.assign(document, YAML.parse(text)),
      (err: unknown) => {
        loaded = undefined
        throw err
      },
    )
    await loaded
  })
  await app.register(fastifySwagger, { mode: 'static', specification: { document } })
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    staticCSP: CSP,
    theme: { title: 'lock-service API reference' },
    uiConfig: { layout: 'BaseLayout', deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0 },
  })
}
