/** Why a command or query was refused; the HTTP layer maps the reason to a status (400, 404, 409, 403). */
export type DomainErrorReason = 'invalid' | 'not-found' | 'conflict' | 'forbidden';

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly reason: DomainErrorReason,
    /** Namespaced, stable kind, e.g. `svc:object:no-such-object`. */
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}
