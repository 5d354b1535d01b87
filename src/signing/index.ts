// mwp/signing: the Signed Document Verification Profile, one signer and one six-stage verifier.

// Document kinds and their profiles.
export {DOCUMENT_KINDS, PROFILES, detectKind, expectedSigner, isDocumentKind} from './profiles.js'
export type {DocumentKind, Principal, PrincipalType, Profile, SignerRule} from './profiles.js'
// The signer.
export {SignError, sign} from './sign.js'
export type {SignOptions, Signed} from './sign.js'
// The six-stage verifier and its rejections.
export {MAX_DOCUMENT_BYTES, Rejection, STAGES, Verified, WIRE_CODE, verify, verifyOffThread} from './verify.js'
export type {
  Diagnostic,
  DiagnosticStage,
  KeyInterval,
  Stage,
  VerificationWireCode,
  VerifiedFacts,
  VerifyResult,
} from './verify.js'
// The one strict Ed25519 check (documents, HELLO and Admission Log rows all go through it).
export {VerifyKey, provePublicKey, strictVerify, strictVerifyOffThread} from '../crypto/ed25519.js'
export type {ProveResult, PublicKeyFault, SignatureFault, StrictVerifyResult} from '../crypto/ed25519.js'
// Registry evidence: the key bindings a verification resolves against.
export {RegistryEvidence, RegistryFault, isIdentifier, validateSnapshot} from './registry.js'
export type {Coverage, ResolvedBinding, TimeText, ValidatedRegistry} from './registry.js'
// Registry snapshots: building, editing, checking and storing them.
export {
  RegistryEditError,
  RegistryFileError,
  addBinding,
  checkRegistry,
  classifyEditFailure,
  describeBindings,
  editRegistryFile,
  expireKey,
  initRegistry,
  isEmptyRegistry,
  keyStatus,
  parsePrincipal,
  parseRegistryBytes,
  readRegistryFile,
  revokeKey,
  serializeRegistry,
  writeNewRegistryFile,
} from './registry-edit.js'
export type {
  BindingRecord,
  BindingRow,
  EditFailure,
  Finding,
  KeyStatus,
  NewBinding,
  RegistryCheck,
  RegistryEditReason,
  RegistrySnapshot,
  Severity,
  StatusRecord,
} from './registry-edit.js'
// Signing keys and their files.
export {
  KeyFileError,
  generateSigningKey,
  parseKeyFile,
  readKeyFile,
  serializeKeyFile,
  writeKeyFile,
} from '../crypto/keyfile.js'
export type {KeyFileErrorCode, SigningKey} from '../crypto/keyfile.js'
// The protocol's hash spelling (`sha256:<hex>`) of exact bytes.
export {contentHash} from '../crypto/hash.js'
