// Each import below must fail to type-check in the consumer: the test asserts these exact errors,
// which proves that the type check sees the exports map and the index modules.

// Exported by src/store/cursors.ts but not by the store's index: TS2305.
import {sqliteCursors} from 'mwp/store'
// Not exported anywhere: TS2305.
import {noSuchName} from 'mwp/json'
// A deep import past the exports map: TS2307.
import {canonicalize} from 'mwp/dist/src/json/jcs.js'

export const used = [sqliteCursors, noSuchName, canonicalize]
