// How drift shows in a node's live status (`data._status`): while drifted, `state` is "drifted", the state
// the watchers derive moves to `live_state`, and `drift` says since when and which fields. Resolved, the
// status is the derived one again. Applying it twice, or to a status that already carries an older drift,
// gives the same result: the watchers apply it to every status they store, whenever they store it.
export interface NodeDrift { detected_at: string; fields: string[] }

export const DRIFTED = 'drifted'

export function withDrift(status: Record<string, unknown>, drift: NodeDrift | null): Record<string, unknown> {
  const { drift: _old, live_state: liveState, ...rest } = status
  const base = rest.state === DRIFTED && typeof liveState === 'string' ? { ...rest, state: liveState } : rest
  if (!drift) return base
  return { ...base, state: DRIFTED, live_state: base.state, drift }
}
