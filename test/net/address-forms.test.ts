// Every spelling of an address is judged as the address it reaches, and the policy's defaults per
// environment: production refuses loopback unless OUTBOUND_ALLOW_CIDRS names it; development and test keep
// allowing it (the simulator listens there); link-local, unspecified and metadata addresses never pass.
import t from 'tap'
import { canonicalAddress, classifyAddress } from '../../src/net/ip-address.ts'
import { OutboundPolicy, outboundPolicyFor } from '../../src/net/outbound-policy.ts'
import { testConfig } from '../../src/config.ts'

const LOOPBACK = ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f000001', '127.1', '0x7f.1', '127.0.1', '017700000001', '0x7F000001', '127.000.000.001',
  '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::FFFF:7F00:1]', '::ffff:0:127.0.0.1', '::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b:1::7f00:1', '2002:7f00:1::', '127.255.255.254']
const UNSPECIFIED = ['0.0.0.0', '0', '0x0', '00', '0.1.2.3', '::', '[::]', '::ffff:0.0.0.0', '0:0:0:0:0:0:0:0']
const LINK_LOCAL = ['169.254.1.1', '0xa9fe0101', 'fe80::1', 'fe80::1%eth0', '[fe80::1%25eth0]', 'febf::1', '::ffff:169.254.1.1']
const METADATA = ['169.254.169.254', '2852039166', '0251.0376.0251.0376', '0xa9.0xfe.0xa9.0xfe', '::ffff:a9fe:a9fe', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192']
const OTHER = ['10.0.0.1', '192.168.1.10', '8.8.8.8', '2001:db8::1', '::ffff:10.0.0.1', '172.16.0.1', '1.2.3.4']
const NAMES = ['example.com', 'localhost', 'cluster.internal', '1e100.net', '0x.example', 'abc', '1.2.3.4.5', '256.1.1.1', '0x1g', '08.1.1.1']

t.test('every spelling is folded to one address and classified by what it reaches', async (t) => {
  for (const [list, kind] of [[LOOPBACK, 'loopback'], [UNSPECIFIED, 'unspecified'], [LINK_LOCAL, 'link-local'], [METADATA, 'metadata'], [OTHER, 'other']] as const) {
    for (const raw of list) {
      const c = canonicalAddress(raw)
      t.ok(c, `${raw} is an address`)
      t.equal(c && classifyAddress(c), kind, `${raw} is ${kind}`)
    }
  }
  t.same(canonicalAddress('2130706433'), { address: '127.0.0.1', family: 4 })
  t.same(canonicalAddress('::ffff:7f00:1'), { address: '0:0:0:0:0:ffff:7f00:1', family: 6, embedded: '127.0.0.1' })
  for (const name of NAMES) t.equal(canonicalAddress(name), undefined, `${name} is a name, left to the resolver`)
})

t.test('production: loopback in any spelling is refused; OUTBOUND_ALLOW_CIDRS can allow it', async (t) => {
  const prod = outboundPolicyFor({ NODE_ENV: 'production', ALLOW_INSECURE_CLUSTERS: false })
  for (const raw of LOOPBACK) t.throws(() => prod.checkAddress(raw), /is not allowed \(loopback; OUTBOUND_ALLOW_CIDRS can allow it\)/, raw)
  for (const raw of OTHER) t.doesNotThrow(() => prod.checkAddress(raw), raw)
  t.match(prod.describe(), /loopback refused unless OUTBOUND_ALLOW_CIDRS names it; any other address allowed/)
  const allowed = outboundPolicyFor({ NODE_ENV: 'production', ALLOW_INSECURE_CLUSTERS: false, OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8, ::1/128' })
  for (const raw of LOOPBACK.filter((r) => !r.startsWith('2002'))) t.doesNotThrow(() => allowed.checkAddress(raw), `${raw} allowed when listed`)
  t.throws(() => allowed.checkAddress('10.0.0.1'), /outside OUTBOUND_ALLOW_CIDRS/, 'and the list narrows everything else')
  t.match(allowed.describe(), /only 127\.0\.0\.0\/8, ::1\/128 allowed/)
})

t.test('development and test keep allowing loopback (npm run kube-sim, the test simulator)', async (t) => {
  for (const env of ['development', 'test']) {
    const policy = outboundPolicyFor({ NODE_ENV: env, ALLOW_INSECURE_CLUSTERS: false })
    for (const raw of LOOPBACK) t.doesNotThrow(() => policy.checkAddress(raw), `${env}: ${raw}`)
    t.match(policy.describe(), /loopback allowed \(not production\)/)
  }
  t.equal(testConfig().NODE_ENV, 'test', 'the test configuration is not production')
})

t.test('link-local, unspecified and metadata never pass, whatever the environment or allow-list', async (t) => {
  const policies = [
    outboundPolicyFor({ NODE_ENV: 'production', ALLOW_INSECURE_CLUSTERS: true }),
    outboundPolicyFor({ NODE_ENV: 'development', ALLOW_INSECURE_CLUSTERS: true }),
    outboundPolicyFor({ NODE_ENV: 'production', ALLOW_INSECURE_CLUSTERS: true, OUTBOUND_ALLOW_CIDRS: '0.0.0.0/0,::/0' }),
  ]
  for (const policy of policies) {
    for (const raw of [...UNSPECIFIED, ...LINK_LOCAL, ...METADATA]) t.throws(() => policy.checkAddress(raw), /is not allowed \((unspecified|link-local|cloud metadata)/, raw)
  }
})

t.test('URLs are judged by the address they reach, names by every address they resolve to', async (t) => {
  const names: Record<string, string[]> = { 'local.test': ['::1'], 'mapped.test': ['::ffff:127.0.0.1'], 'fine.test': ['10.0.0.2'], 'half.test': ['10.0.0.3', '127.0.0.1'] }
  const prod = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], refuseLoopback: true, resolve: async (h) => names[h] ?? [] })
  for (const url of ['https://2130706433:6443', 'https://0177.0.0.1', 'https://0x7f000001', 'http://127.1', 'https://[::ffff:127.0.0.1]', 'https://[::1]:8443', 'https://local.test', 'https://mapped.test', 'https://half.test']) {
    await t.rejects(prod.check(url), /not allowed \(loopback/, url)
  }
  await t.resolves(prod.check('https://fine.test'))
  t.throws(() => new OutboundPolicy({ allowInsecure: false, allowCidrs: ['10.0.0.0/33'] }), /not a CIDR/)
})

t.test('the policy resolver hands back exactly the addresses it checked', async (t) => {
  const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], resolve: async (h) => (h === 'two.test' ? ['10.0.0.7', 'fd12::7'] : ['169.254.169.254']) })
  const lookup = policy.lookup('cluster server')
  const all = await new Promise((resolve, reject) => lookup('two.test', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))))
  t.same(all, [{ address: '10.0.0.7', family: 4 }, { address: 'fd12::7', family: 6 }])
  const one = await new Promise((resolve, reject) => lookup('two.test', { family: 6 }, (err, address, family) => (err ? reject(err) : resolve([address, family]))))
  t.same(one, ['fd12::7', 6])
  const refused = await new Promise((resolve) => lookup('meta.test', {}, (err) => resolve(err)))
  t.match(refused, { code: 'ERR_OUTBOUND_POLICY', message: /169\.254\.169\.254 is not allowed/ })
})
