import { Type } from 'typebox'
import { Defaulted, StringEnum, Timestamp } from './common.ts'

const Metric = Type.Object({
  value: Type.Number(),
  change: Type.Number({ description: 'percent change against the value 7 days earlier (the figure recorded that day; in a user\'s first week, what the records say existed then), rounded to 0.1; 0 with trend `neutral` when the value is unchanged, and also when it was 0 then (growth from nothing has no percentage: read it as "no previous data")' }),
  trend: StringEnum(['up', 'down', 'neutral']),
}, { additionalProperties: false })

export const DashboardStats = Type.Object({
  total_workflows: Metric,
  published_workflows: Metric,
  total_runs: Metric,
  success_rate: { ...Metric, description: 'percent of finished runs that completed' },
  clusters: Metric,
  healthy_clusters: Metric,
  tracked_resources: Metric,
  builds: Metric,
  computed_at: Timestamp,
}, { additionalProperties: false, description: 'pre-computed per user; kept up to date as workflows and runs change' })

export const RecentWorkflowsQuery = Type.Object({
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'how many workflows' })),
}, { additionalProperties: false })
