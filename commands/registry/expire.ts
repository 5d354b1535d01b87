import {Flags} from '@oclif/core'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {registryFlag} from '../../src/cli/flags.js'
import {formatUtcNow} from '../../src/json/timestamp.js'
import {checkRegistry, classifyEditFailure, describeBindings, editRegistryFile, expireKey} from '../../src/signing/registry-edit.js'

export default class RegistryExpire extends MwpCommand {
  static summary = 'Record an expiry (validUntil) for a key.'
  static description = `Appends one validity-history record {sequence, recordedAt, validUntil} to the key's binding. Validity history is append-only: the earliest validUntil ever recorded is the effective one, and it may only be moved earlier. --recorded-at (default now, UTC) must not be earlier than the key's previous record.

The edit is refused (exit 1, the file unchanged byte for byte) with one of: key-unknown (no such key ID), history-boundary-moved-later (a later value than the effective one: extending validity needs new key material under a new key ID), boundary-unchanged (the same instant: nothing to record), history-recorded-at-decreasing, registry-invalid. A malformed timestamp is a usage error (exit 2). The file is replaced atomically.

${EXIT_CODES_HELP}`

  static examples = ['<%= config.bin %> registry expire --registry registry.json --key-id urn:example:key:alice-1 --at 2026-12-31T00:00:00Z']

  static flags = {
    registry: registryFlag,
    'key-id': Flags.string({description: 'Key ID of the binding.', required: true}),
    at: Flags.string({description: 'The validUntil instant (protocol timestamp).', required: true}),
    'recorded-at': Flags.string({description: 'When this record is made (protocol timestamp). Default: now, UTC.'}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(RegistryExpire)
    if (flags.registry === '-') throw usage('--registry must name a file: standard input cannot be edited in place')
    const now = formatUtcNow()
    const recordedAt = flags['recorded-at'] ?? now
    const keyId = flags['key-id']
    let after
    try {
      after = editRegistryFile(flags.registry, (reg) => expireKey(reg, keyId, flags.at, recordedAt)).after
    } catch (e) {
      const f = classifyEditFailure(e)
      if (!f) throw e
      if (f.kind === 'environment') throw environment(f.message)
      if (f.kind === 'usage') throw usage(f.message)
      return {
        status: 'rejected',
        code: 'INVALID_COMMAND',
        text: `refused (${f.reason}): ${f.message}\n${flags.registry} is unchanged.`,
        extra: {refusal: {reason: f.reason, message: f.message}},
      }
    }
    const row = describeBindings(after, now).find((r) => r.keyId === keyId)!
    const record = after.bindings.filter((b) => b.keyId === keyId).reduce((a, b) => (b.validityHistory.length > a.validityHistory.length ? b : a)).validityHistory.at(-1)!
    const notes = checkRegistry(after, {at: now}).findings.filter((f) => f.keyId === keyId && f.severity !== 'info')
    if (!flags.json) for (const n of notes) process.stderr.write(`mwp: ${n.severity}: ${n.message}\n`)
    const text = [
      `recorded ${keyId} validUntil ${flags.at} (sequence ${record.sequence}, recorded ${record.recordedAt})`,
      `  effective validUntil: ${row.validUntil ?? '-'}`,
      `  effective revokedAt:  ${row.revokedAt ?? '-'}`,
      `  status now: ${row.status}`,
    ].join('\n')
    return {status: 'ok', result: {registry: flags.registry, keyId, record, binding: row, warnings: notes}, text}
  }
}
