import { readFile } from 'node:fs/promises'
import type { OutgoingHttpHeaders } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { OpenAPIV3 } from 'openapi-types'

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

/** The routes @fastify/swagger-ui registers under /docs (the page, its assets, the document). */
const PAGE_ROUTES = ['/', '/static/index.html', '/static/swagger-initializer.js', '/json', '/yaml', '/static/*']
/** Headers of the page's own answer that this service's reply sets for itself. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])

/**
 * GET /docs: an API reference page (Swagger UI, its assets served from node_modules) on openapi.yaml.
 * Open without an API key, like /openapi.yaml; "Try it out" sends the key given to Authorize.
 *
 * Most processes never serve /docs, so the page is built on its first visit: Swagger UI, @fastify/swagger,
 * @fastify/static and the YAML parser are loaded then, in a Fastify instance of their own that this
 * service's routes (the same paths, registered at start) hand each request to. A process that never
 * serves the page does not keep their code and routes (~2 MiB of heap, more of RSS).
 */
export async function apiDocsRoutes(app: FastifyInstance, { openapiPath }: ApiDocsOptions): Promise<void> {
  let page: Promise<FastifyInstance> | undefined
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    page ??= docsPage(openapiPath).catch((err: unknown) => {
      page = undefined
      throw err
    })
    // A HEAD is answered from the GET's body, as Fastify answers the HEAD of any GET route.
    const res = await (await page).inject({ method: 'GET', url: request.url, headers: request.headers })
    // A bad path (a NUL byte, …) is this service's error, answered by its error handler as before.
    const failure = failed.get(res.raw.req)
    if (failure !== undefined) throw failure
    const headers: OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(res.headers)) if (!HOP_HEADERS.has(name) && value !== undefined) headers[name] = value
    reply.headers(headers)
    // An unknown asset: this service's 404 (its JSON shape), with the page's headers as before.
    if (res.statusCode === 404) return reply.callNotFound()
    // No body (a redirect, a 304): none here either, so no content-type is added.
    return reply.code(res.statusCode).send(res.rawPayload.length > 0 ? res.rawPayload : undefined)
  }
  await app.register(
    async (docs) => {
      // Open, like /openapi.yaml; hidden from the contract (and from the zeroed HTTP series), like Swagger UI's own.
      for (const url of PAGE_ROUTES) docs.get(url, { schema: { hide: true }, config: { access: 'public' } }, forward)
    },
    { prefix: '/docs' },
  )
}

/** The errors the page's instance met, by its request: rethrown to this service's error handler. */
const failed = new WeakMap<object, unknown>()

/** The page's Fastify instance: Swagger UI on the document in openapi.yaml, at /docs. */
async function docsPage(openapiPath: URL): Promise<FastifyInstance> {
  const [text, { default: YAML }, { default: fastifySwagger }, { default: fastifySwaggerUi }] = await Promise.all([
    readFile(openapiPath, 'utf8'),
    import('yaml'),
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ])
  const page = Fastify({ logger: false })
  page.setErrorHandler((err, request, reply) => {
    failed.set(request.raw, err)
    return reply.code(500).send()
  })
  await page.register(fastifySwagger, { mode: 'static', specification: { document: YAML.parse(text) as OpenAPIV3.Document } })
  await page.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    staticCSP: CSP,
    theme: { title: 'lock-service API reference' },
    uiConfig: { layout: 'BaseLayout', deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0 },
  })
  await page.ready()
  return page
}
