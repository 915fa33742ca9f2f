// The per-user registry behind bounded notification streams (API.md §14), without sockets: the oldest beyond
// the limit is ended with the final event, per user; a stream evicted before it started ends as it starts;
// leaving is idempotent and frees the place.
import t from 'tap'
import { NewestWins } from '../../src/events/newest-wins.ts'

const FINAL = { type: 'replaced', data: { reason: 'newer' } }

function stream(wins: NewestWins, user: string) {
  const ended: Array<[string, unknown]> = []
  const admission = wins.admit(user)
  return { admission, ended, start: () => admission.started((type, data) => { ended.push([type, data]); admission.leave() }) }
}

t.test('the oldest started stream beyond the limit ends with the final event; other users keep theirs', async (t) => {
  const wins = new NewestWins(2, FINAL)
  const a1 = stream(wins, 'a'); a1.start()
  const b1 = stream(wins, 'b'); b1.start()
  const a2 = stream(wins, 'a'); a2.start()
  t.same(a1.ended, [])
  const a3 = stream(wins, 'a'); a3.start()
  t.same(a1.ended, [['replaced', { reason: 'newer' }]], 'the oldest ended once, with the final event')
  t.same([a2.ended, a3.ended, b1.ended], [[], [], []])
  t.equal(wins.held('a'), 2)
  t.equal(wins.held('b'), 1)
})

t.test('a stream evicted before it started ends as soon as it starts', async (t) => {
  const wins = new NewestWins(1, FINAL)
  const pending = stream(wins, 'a')
  const newer = stream(wins, 'a')
  t.equal(wins.held('a'), 1)
  pending.start()
  t.same(pending.ended, [['replaced', { reason: 'newer' }]])
  newer.start()
  t.same(newer.ended, [])
})

t.test('leaving frees the place, twice is harmless, and an emptied user is forgotten', async (t) => {
  const wins = new NewestWins(2, FINAL)
  const a1 = stream(wins, 'a'); a1.start()
  const a2 = stream(wins, 'a'); a2.start()
  a1.admission.leave()
  a1.admission.leave()
  t.equal(wins.held('a'), 1)
  const a3 = stream(wins, 'a'); a3.start()
  t.same(a2.ended, [], 'no one replaced: a place was free')
  a2.admission.leave()
  a3.admission.leave()
  t.equal(wins.held('a'), 0)
  t.equal((wins as unknown as { byUser: Map<string, unknown> }).byUser.size, 0)
})
