// The shared part of the registry-editing commands: run one edit on a registry file and turn a
// refused edit into the command's outcome. The file is unchanged whenever an edit is refused.

import {type RegistrySnapshot, classifyEditFailure, editRegistryFile} from '../signing/registry-edit.js'
import {type Outcome, environment, usage} from './base.js'

/** Applies `edit` to the registry file, or returns the INVALID_COMMAND refusal outcome. */
export function applyRegistryEdit(
  path: string,
  edit: (reg: RegistrySnapshot) => RegistrySnapshot,
): {after: RegistrySnapshot} | Outcome {
  if (path === '-') throw usage('--registry must name a file: standard input cannot be edited in place')
  try {
    return {after: editRegistryFile(path, edit).after}
  } catch (e) {
    const f = classifyEditFailure(e)
    if (!f) throw e
    if (f.kind === 'environment') throw environment(f.message)
    if (f.kind === 'usage') throw usage(f.message)
    return {
      status: 'rejected',
      code: 'INVALID_COMMAND',
      text: `refused (${f.reason}): ${f.message}\n${path} is unchanged.`,
      extra: {refusal: {reason: f.reason, message: f.message}},
    }
  }
}
