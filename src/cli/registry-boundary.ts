// `mwp registry expire` and `mwp registry revoke`: both append one validity-history record that
// adds or moves a boundary (validUntil or revokedAt) earlier. One implementation, two commands.

import {Flags, type Interfaces} from '@oclif/core'
import {formatUtcNow} from '../json/timestamp.js'
import {checkRegistry, describeBindings, expireKey, revokeKey} from '../signing/registry-edit.js'
import {exitCodesHelp, MwpCommand, type Outcome} from './base.js'
import {formerly, registryFlag} from './flags.js'
import {confirmed, requireConfirmation, yesFlag} from './prompt.js'
import {applyRegistryEdit} from './registry-edit.js'

export type Boundary = 'validUntil' | 'revokedAt'

/** The flag naming the boundary instant: its field's name (`--at` is only "evaluate at", issue #18). */
const FLAG = {validUntil: 'valid-until', revokedAt: 'revoked-at'} as const
const VERB = {validUntil: 'Expire', revokedAt: 'Revoke'} as const

export function boundaryDescription(field: Boundary): string {
  return `Appends one validity-history record {sequence, recordedAt, ${field}} to the key's binding. Validity history is append-only: the earliest ${field} ever recorded is the effective one, and it may only be moved earlier. --recorded-at (default now, UTC) must not be earlier than the key's previous record.

The record cannot be taken back, so this asks for confirmation first; the prompt appears only on a terminal without --json, and scripts pass --yes (without it, a non-interactive run is a usage error, exit 2, and the file is not touched).

The edit is refused (exit 1, the file unchanged byte for byte) with one of: key-unknown (no such key ID), history-boundary-moved-later (a later value than the effective one: extending validity needs new key material under a new key ID), boundary-unchanged (the same instant: nothing to record), history-recorded-at-decreasing, registry-invalid. A malformed timestamp is a usage error (exit 2). The file is replaced atomically.

${exitCodesHelp({rejected: 'the edit is refused (the reason is printed; the file is unchanged)', usage: 'not on a terminal (or with --json) without --yes; a malformed flag', environment: 'cannot read or replace the registry file', cancelled: true})}`
}

export function boundaryFlags(field: Boundary) {
  const instant = Flags.string({
    description: `The ${field} instant (protocol timestamp).`,
    required: true,
    ...formerly('at'),
  })
  return {
    registry: registryFlag,
    'key-id': Flags.string({description: 'Key ID of the binding.', required: true}),
    ...(field === 'validUntil' ? {'valid-until': instant} : {'revoked-at': instant}),
    'recorded-at': Flags.string({description: 'When this record is made (protocol timestamp). Default: now, UTC.'}),
    yes: yesFlag(VERB[field]),
  }
}

export abstract class BoundaryCommand extends MwpCommand {
  protected abstract readonly field: Boundary

  protected async execute(): Promise<Outcome> {
    const field = this.field
    const {flags} = await this.parse(this.constructor as typeof BoundaryCommand & {flags: Interfaces.FlagInput})
    const f = flags as {registry: string; 'key-id': string; 'recorded-at'?: string; yes: boolean; json: boolean}
    const at = (flags as Record<string, unknown>)[FLAG[field]] as string
    const keyId = f['key-id']
    requireConfirmation(f, `recording ${field}`)
    const question = `${VERB[field]} ${keyId} (${field} ${at}) in ${f.registry}? This cannot be undone.`
    if (!(await confirmed(f, question)))
      return {status: 'ok', result: {recorded: false, registry: f.registry, keyId}, text: 'not recorded'}
    const now = formatUtcNow()
    const recordedAt = f['recorded-at'] ?? now
    const apply = field === 'validUntil' ? expireKey : revokeKey
    const edited = applyRegistryEdit(f.registry, (reg) => apply(reg, keyId, at, recordedAt))
    if (!('after' in edited)) return edited
    const after = edited.after
    const row = describeBindings(after, now).find((r) => r.keyId === keyId)!
    const record = after.bindings
      .filter((b) => b.keyId === keyId)
      .reduce((a, b) => (b.validityHistory.length > a.validityHistory.length ? b : a))
      .validityHistory.at(-1)!
    const notes = checkRegistry(after, {at: now}).findings.filter((n) => n.keyId === keyId && n.severity !== 'info')
    if (!f.json) for (const n of notes) process.stderr.write(`mwp: ${n.severity}: ${n.message}\n`)
    const text = [
      `recorded ${keyId} ${field} ${at} (sequence ${record.sequence}, recorded ${record.recordedAt})`,
      `  effective validUntil: ${row.validUntil ?? '-'}`,
      `  effective revokedAt:  ${row.revokedAt ?? '-'}`,
      `  status now: ${row.status}`,
    ].join('\n')
    return {status: 'ok', result: {registry: f.registry, keyId, record, binding: row, warnings: notes}, text}
  }
}
