import fp from 'fastify-plugin'
import { EventBus } from '../src/events/bus.ts'

declare module 'fastify' {
  interface FastifyInstance { bus: EventBus }
}

export default fp(async (app) => {
  const bus = new EventBus()
  app.decorate('bus', bus)
  app.addHook('onClose', async () => bus.removeAll())
}, { name: 'events' })
