// The in-process bus, this replica's identity, and the bus of what other replicas announced (remoteBus):
// in shared mode the stream hub's tailer feeds it the events that concern work this replica holds (its
// clusters' watches); in single mode nothing ever arrives on it.
import fp from 'fastify-plugin'
import { EventBus } from '../src/events/bus.ts'
import { replicaIdentity, type ReplicaIdentity } from '../src/replicas/identity.ts'

declare module 'fastify' {
  interface FastifyInstance { bus: EventBus; remoteBus: EventBus; replica: ReplicaIdentity }
}

export default fp(async (app) => {
  const bus = new EventBus()
  const remoteBus = new EventBus()
  app.decorate('bus', bus)
  app.decorate('remoteBus', remoteBus)
  app.decorate('replica', replicaIdentity(app.config.REPLICA_MODE, app.config.MONGODB_URI !== undefined))
  app.log.info({ replica: app.replica.id, shared: app.replica.shared }, 'replica')
  app.addHook('onClose', async () => { bus.removeAll(); remoteBus.removeAll() })
}, { name: 'events', dependencies: ['config'] })
