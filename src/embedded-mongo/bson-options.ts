// One set of BSON options for everything the server decodes (wire messages and journal records), so a
// document replayed from disk holds exactly the same JS values as one that arrived over the wire.
import type { DeserializeOptions, SerializeOptions } from 'bson'

// Int32/Double and Int64 values within the safe range become JS numbers, which mingo can compare and
// do arithmetic on. Re-serialising picks int32 for integers that fit and double otherwise; the driver
// (promoteLongs by default) sees equal values.
export const DESERIALIZE_OPTIONS: DeserializeOptions = {
  promoteValues: true,
  promoteLongs: true,
  promoteBuffers: false,
  bsonRegExp: false,
}

// mingo leaves `undefined` where MongoDB would omit a field; omit it on the way out too.
export const SERIALIZE_OPTIONS: SerializeOptions = { ignoreUndefined: true }
