import t from 'tap'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'

const names: Record<string, string[]> = {
  'cluster.internal': ['10.0.0.5'],
  'metadata.evil': ['169.254.169.254'],
  'mixed.evil': ['10.0.0.6', 'fd00:ec2::254'],
  'mapped.evil': ['::ffff:169.254.169.254'],
}
const resolve = async (host: string) => { if (!names[host]) throw new Error('ENOTFOUND'); return names[host] }
const policy = new OutboundPolicy({ allowInsecure: false, allowCidrs: [], resolve })

t.test('https to public, private and loopback addresses is allowed', async (t) => {
  for (const url of ['https://1.2.3.4:6443', 'https://10.1.2.3', 'https://127.0.0.1:8443', 'https://cluster.internal:6443', 'https://[2001:db8::1]:6443']) {
    await t.resolves(policy.check(url), url)
  }
})

t.test('plain http needs ALLOW_INSECURE_CLUSTERS', async (t) => {
  await t.rejects(policy.check('http://10.0.0.1'), /must use https/)
  await t.resolves(new OutboundPolicy({ allowInsecure: true, allowCidrs: [], resolve }).check('http://10.0.0.1'))
  await t.rejects(policy.check('ftp://10.0.0.1'), /must use https/)
})

t.test('link-local and metadata addresses are refused, literally or after DNS', async (t) => {
  for (const url of ['https://169.254.169.254', 'https://[fe80::1]', 'https://[fd00:ec2::254]', 'https://100.100.100.200', 'https://metadata.evil', 'https://mixed.evil', 'https://mapped.evil', 'https://0.0.0.0', 'https://[::ffff:169.254.169.254]']) {
    await t.rejects(policy.check(url), /not allowed/, url)
  }
})

t.test('an allow-list narrows everything; bad input is a clear 400', async (t) => {
  const narrow = new OutboundPolicy({ allowInsecure: false, allowCidrs: ['10.0.0.0/8'], resolve })
  await t.resolves(narrow.check('https://cluster.internal'))
  await t.rejects(narrow.check('https://127.0.0.1'), /outside OUTBOUND_ALLOW_CIDRS/)
  await t.rejects(policy.check('not a url'), /absolute URL/)
  await t.rejects(policy.check('https://nowhere.invalid'), /does not resolve/)
  await t.rejects(policy.check('https://user:pw@10.0.0.1'), /credentials/)
  t.throws(() => new OutboundPolicy({ allowInsecure: false, allowCidrs: ['banana'] }), /not a CIDR/)
})

t.test('checkFormat judges a URL without the network: scheme, credentials, literal addresses', async (t) => {
  let lookups = 0
  const counting = new OutboundPolicy({ allowInsecure: false, allowCidrs: [], resolve: async (host) => { lookups++; return resolve(host) } })
  t.equal(counting.checkFormat('https://nowhere.invalid/v2', 'url').host, 'nowhere.invalid', 'a name that does not resolve is fine to save')
  t.equal(counting.checkFormat('https://metadata.evil', 'url').host, 'metadata.evil', 'where a name points is for connection time')
  t.equal(lookups, 0, 'no name was resolved')
  t.throws(() => counting.checkFormat('http://issuer.example', 'issuer_url'), /issuer_url must use https/)
  t.throws(() => counting.checkFormat('https://169.254.169.254', 'url'), /not allowed/)
  t.throws(() => counting.checkFormat('https://[::ffff:169.254.169.254]', 'url'), /not allowed/)
  t.throws(() => counting.checkFormat('https://u:p@10.0.0.1', 'url'), /credentials/)
  t.throws(() => counting.checkFormat('nope', 'url'), /absolute URL/)
  t.throws(() => new OutboundPolicy({ allowInsecure: false, allowCidrs: ['10.0.0.0/8'], resolve }).checkFormat('https://127.0.0.1'), /outside OUTBOUND_ALLOW_CIDRS/)
  t.equal(new OutboundPolicy({ allowInsecure: true, allowCidrs: [], resolve }).checkFormat('http://issuer.example').protocol, 'http:')
  await t.rejects(counting.check('https://metadata.evil'), /not allowed/, 'check still resolves and refuses')
})
