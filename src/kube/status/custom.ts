// Custom resources: the conventional Ready or Available condition when the operator sets one, otherwise
// nothing can be said about their health.
import { condition, describeCondition, result, type DerivedStatus, type KubeObject } from './types.ts'

// Operators commonly report work in progress as Ready=False with a reason like these.
const IN_PROGRESS = /progress|reconcil|creat|pending|wait|provision|initiali[sz]|deploying|updating/i

export function customStatus(o: KubeObject): DerivedStatus {
  const c = condition(o, 'Ready') ?? condition(o, 'Available')
  if (!c) return result('unknown', 'no Ready or Available condition reported', null, {})
  const text = describeCondition(c)
  if (c.status === 'True') return result('running', `${c.type}${c.message ? `: ${c.message}` : ''}`, null, {})
  if (c.status === 'False') return result(IN_PROGRESS.test(`${c.reason ?? ''} ${c.message ?? ''}`) ? 'pending' : 'failed', text, null, {})
  return result('pending', text, null, {})
}
