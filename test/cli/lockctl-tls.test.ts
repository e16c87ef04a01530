/** lockctl to an https:// service that requires client certificates: --ca-file, --cert-file, --key-file or their variables. */
import t from 'tap'
import { startListening } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'
import { lockctl } from '../helpers/lockctl.js'

const certs = await makeTlsCerts({ t })
const redis = await startRedis({ t })
const { address: url } = await startListening(t, [redis.url], {
  https: { cert: certs.server.cert, key: certs.server.key, clientCa: certs.ca },
  logLevel: 'silent',
})

t.test('the files as options, then as variables: the lock is taken and seen', async (t) => {
  const files = ['--ca-file', certs.caFile, '--cert-file', certs.client.certFile, '--key-file', certs.client.keyFile]
  const taken = await lockctl(['acquire', 'cli:tls', '--ttl', '30s', ...files], { url })
  t.equal(taken.code, 0, taken.stderr)
  t.match(JSON.parse(taken.stdout), { key: 'cli:tls', fence: Number })
  const env = {
    LOCK_SERVICE_CA_FILE: certs.caFile,
    LOCK_SERVICE_CERT_FILE: certs.client.certFile,
    LOCK_SERVICE_KEY_FILE: certs.client.keyFile,
  }
  const seen = await lockctl(['status', 'cli:tls'], { url, env })
  t.equal(seen.code, 0, seen.stderr)
})

t.test('no client certificate: unreachable (69), and nothing taken', async (t) => {
  const refused = await lockctl(['acquire', 'cli:tls-refused', '--ttl', '30s', '--ca-file', certs.caFile], { url })
  t.equal(refused.code, 69, refused.stderr)
  t.match(refused.stderr, /lockctl: /)
  t.notOk(Object.keys(await redis.keys()).some((k) => k.includes('{cli:tls-refused}')))
})

t.test('usage errors: a CA file for http://, a certificate without its key, an unreadable file', async (t) => {
  const plain = await lockctl(['status', 'x', '--ca-file', certs.caFile], { url: url.replace('https:', 'http:') })
  t.equal(plain.code, 64)
  t.match(plain.stderr, /--ca-file: only for an https:\/\/ service URL/)
  const half = await lockctl(['status', 'x', '--cert-file', certs.client.certFile], { url })
  t.equal(half.code, 64)
  t.match(half.stderr, /--cert-file and --key-file go together/)
  const missing = await lockctl(['status', 'x', '--ca-file', `${certs.dir}/nope.pem`], { url })
  t.equal(missing.code, 64)
  t.match(missing.stderr, /--ca-file: cannot read .*ENOENT/)
})
