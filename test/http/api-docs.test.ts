/**
 * GET /docs: the API reference page on the openapi.yaml that GET /openapi.yaml serves, open without an
 * API key like /openapi.yaml, loaded in a real headless browser (Debian's chromium driven by
 * playwright-core; scripts/ensure-deps.sh installs it) that may reach nothing but the service.
 */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import YAML from 'yaml'
import { chromium, type ConsoleMessage } from 'playwright-core'
import { openapiPath } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { startRedis } from '../../harness/redis-server.js'
import { startApp, startListening } from '../../harness/app.js'

const CHROMIUM = '/usr/bin/chromium'
const contract = YAML.parse(await readFile(openapiPath, 'utf8')) as { paths: Record<string, Record<string, unknown>> }
/** Every operation of openapi.yaml, as the page shows it: `POST /locks/{key}`. */
const operations = Object.entries(contract.paths)
  .flatMap(([route, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${route}`))
  .sort()
const secret = 'sk_docs_reader_0123456789abcdef'
/** With API keys: /docs must stay open while the lock routes need a key. */
const withKeys: Partial<Config> = {
  auth: { keys: [{ name: 'reader', secretSha256: createHash('sha256').update(secret).digest('hex'), prefixes: ['docs:'], admin: false }] },
}

t.test('GET /docs: open like /openapi.yaml, the same document, assets served here, unknown paths 404 in the JSON shape', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url], withKeys)
  t.equal((await app.inject({ url: '/locks/docs:a' })).statusCode, 401, 'the service needs a key')
  const metrics = (await app.inject({ url: '/metrics' })).body
  t.notMatch(metrics, /route="\/docs/, 'no HTTP series for the page before it is visited (hidden routes are not zeroed)')
  /** Swagger UI's modules loaded into this process so far (CommonJS: in require's cache). */
  const swaggerUiLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('@fastify/swagger-ui'))
  t.notOk(swaggerUiLoaded(), 'Swagger UI is not loaded before the page is visited (a process that never serves it does not keep it)')

  const page = await app.inject({ url: '/docs' })
  t.equal(page.statusCode, 200, '/docs needs no key')
  t.ok(swaggerUiLoaded(), 'the first visit loads it')
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.headers['content-security-policy'], /default-src 'self'/, 'the browser may load nothing from elsewhere')
  t.match(page.body, /<title>lock-service API reference<\/title>/)
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')
  t.ok(assets.length >= 5, `the page links its scripts and styles (${assets.length})`)
  for (const asset of assets) {
    t.match(asset, /^\/docs\/static\//, `${asset}: served by the service`)
    const res = await app.inject({ url: asset })
    t.equal(res.statusCode, 200, `${asset}: 200 without a key`)
    t.ok(res.rawPayload.length > 0, `${asset}: not empty`)
  }

  const json = await app.inject({ url: '/docs/json' })
  t.equal(json.statusCode, 200)
  t.same(json.json(), contract, '/docs shows openapi.yaml itself')

  const refused: [string, string, number, string][] = [
    ['GET', '/docs/nope', 404, 'route_not_found'],
    ['GET', '/docs/static/nope.js', 404, 'route_not_found'],
    ['GET', '/docs/static/..%2f..%2fpackage.json', 404, 'route_not_found'],
    ['GET', '/docs/static/../../package.json', 404, 'route_not_found'],
    ['GET', '/docs/static/%00', 400, 'invalid_request'],
    ['GET', '/docs/static/%ZZ', 400, 'invalid_request'],
    ['POST', '/docs', 405, 'method_not_allowed'],
    ['DELETE', '/docs/json', 405, 'method_not_allowed'],
  ]
  for (const [method, url, status, code] of refused) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, status, `${method} ${url}: ${status}`)
    t.match(res.headers['content-type'], /^application\/json/, `${method} ${url}: JSON`)
    t.match(res.json(), { error: code, message: String }, `${method} ${url}: ${code}`)
  }
})

t.test('the page renders every operation of openapi.yaml in headless chromium, asking only the service', async (t) => {
  const redis = await startRedis({ t })
  const { address } = await startListening(t, [redis.url], withKeys)
  const browser = await chromium.launch({ executablePath: CHROMIUM })
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const problems: string[] = []
  const elsewhere: string[] = []
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`))
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (new URL(url).origin === address) return route.continue()
    elsewhere.push(url)
    return route.abort()
  })

  const answer = await page.goto(`${address}/docs`)
  t.equal(answer?.status(), 200)
  await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, operations.length, { timeout: 15_000 })
  const shown = await page.$$eval('.opblock', (blocks) =>
    blocks.map(
      (b) =>
        `${b.querySelector('.opblock-summary-method')?.textContent} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
    ),
  )
  t.same(shown.sort(), operations, `the ${operations.length} operations, by method and path`)
  t.ok(shown.includes('POST /locks/{key}'), 'POST /locks/{key} among them')
  t.match(await page.textContent('.info .title'), /lock-service/, 'the title')
  const screenshot = path.join(t.testdir(), 'docs.png')
  const png = await page.screenshot({ fullPage: true })
  await writeFile(screenshot, png)
  t.same([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG', `${screenshot}: a PNG`)
  const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)]
  t.equal(width, 1280, 'as wide as the viewport')
  t.ok(height > 2000, `as tall as the page (${height} px)`)
  t.ok(png.length > 50_000 && png.length < 10_000_000, `a plausible size (${png.length} bytes)`)

  // An operation opens on a click; a watch shows its event stream among the answers' media types.
  await page.click('#operations-locks-watchLock .opblock-summary-control')
  const options = page.locator('#operations-locks-watchLock .response-control-media-type option')
  // The section renders after the click returns (on a loaded machine, after the next line would read it).
  await options.first().waitFor({ state: 'attached', timeout: 10_000 })
  const mediaTypes = await options.allTextContents()
  t.ok(mediaTypes.includes('text/event-stream'), `GET /locks/{key}/watch answers text/event-stream too (${mediaTypes.join(', ')})`)

  t.same(elsewhere, [], 'no request leaves the service')
  t.same(problems, [], 'no console errors or warnings, no failed requests')
})
