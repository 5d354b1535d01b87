// mwp/authz (spec §12, §11.3): capability tokens — the Authorization Service that issues them and
// the verifier tool services check them with. Tokens are secrets: never put one in a Message,
// Agent Card, Context Package, Artifact or Group Event (ACCEPTANCE G3).

export {TOKEN_DOMAIN, decodeToken, encodeToken} from './token.js'
export type {CapabilityClaims, DecodeResult, TokenGrant, TokenLimits} from './token.js'
export {AuthorizationService, TOKEN_TTL_SECONDS, issueToken, leaseStatus} from './issuer.js'
export type {Caller, ExecutionBinding, IssueResult, IssuerOptions, Refused, TokenRequest} from './issuer.js'
export {REJECTION_CODES, verifyToken} from './verifier.js'
export type {TokenRejection, UsageMeter, VerifyOptions, VerifyResult} from './verifier.js'
