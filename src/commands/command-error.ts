/** Why a command was refused; the HTTP layer maps the reason to a status (400, 404, 409, 403). */
export type CommandErrorReason = 'invalid' | 'not-found' | 'conflict' | 'forbidden';

export class CommandError extends Error {
  override readonly name = 'CommandError';
  constructor(
    readonly reason: CommandErrorReason,
    /** Namespaced, stable kind, e.g. `svc:object:no-such-object`. */
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}
