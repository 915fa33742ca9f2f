// Jobs finish; CronJobs schedule. A Job's terminal conditions decide it, a CronJob is healthy while it keeps
// scheduling and its last job did not fail.
import { condition, describeCondition, result, spec, status, num, str, type DerivedStatus, type KubeObject } from './types.ts'

export function jobStatus(o: KubeObject): DerivedStatus {
  const s = status(o)
  const completions = num(spec(o).completions, 1)
  const counters = { active: num(s.active), succeeded: num(s.succeeded), failed: num(s.failed), completions }
  const ready = `${counters.succeeded}/${completions}`
  const failed = condition(o, 'Failed')
  if (failed?.status === 'True') return result('failed', describeCondition(failed), ready, counters)
  const complete = condition(o, 'Complete')
  if (complete?.status === 'True') return result('completed', describeCondition(complete), ready, counters)
  if (spec(o).suspend === true || condition(o, 'Suspended')?.status === 'True') return result('warning', 'suspended: no pods are started until it is resumed', ready, counters)
  if (counters.active > 0) return result('running', `${counters.active} pod${counters.active === 1 ? '' : 's'} active, ${ready} completions`, ready, counters)
  return result('pending', 'waiting for its pods to start', ready, counters)
}

export function cronJobStatus(o: KubeObject): DerivedStatus {
  const s = status(o)
  const active = Array.isArray(s.active) ? s.active.length : 0
  const lastSchedule = str(s.lastScheduleTime)
  const lastSuccess = str(s.lastSuccessfulTime)
  const counters = { active, schedule: str(spec(o).schedule), lastScheduleTime: lastSchedule, lastSuccessfulTime: lastSuccess }
  if (spec(o).suspend === true) return result('warning', 'suspended: no jobs are scheduled until it is resumed', null, counters)
  if (active > 0) return result('running', `${active} job${active === 1 ? '' : 's'} active`, null, counters)
  // Timestamps are RFC 3339 in UTC with the same precision, so they compare as text.
  if (lastSchedule && (!lastSuccess || lastSuccess < lastSchedule)) return result('warning', `the job scheduled at ${lastSchedule} did not succeed`, null, counters)
  if (lastSchedule) return result('running', `last scheduled at ${lastSchedule}`, null, counters)
  return result('running', `waiting for its first schedule (${counters.schedule ?? 'no schedule'})`, null, counters)
}
