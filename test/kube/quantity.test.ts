import t from 'tap'
import { parseQuantity } from '../../src/kube/quantity.ts'

t.test('CPU, memory and storage quantities', async (t) => {
  const cases: Array<[string, number]> = [['250m', 0.25], ['2', 2], ['1.5', 1.5], ['1500000n', 0.0015], ['512Mi', 512 * 2 ** 20], ['1Gi', 2 ** 30], ['2G', 2e9], ['1e3', 1000], ['100k', 1e5], ['.5', 0.5]]
  for (const [text, value] of cases) t.equal(parseQuantity(text), value, text)
  for (const bad of ['', 'abc', '1X', '1 Gi', undefined]) t.ok(Number.isNaN(parseQuantity(bad)), String(bad))
})
