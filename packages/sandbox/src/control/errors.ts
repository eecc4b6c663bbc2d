/** A control call that cannot be done: bad input (400), unknown merchant or token (404), duplicate id (409). */
export class SandboxControlError extends Error {
  readonly status: 400 | 404 | 409;
  /** For a 400: the input field at fault ("ms", "match.path", "urls[2]"), when there is one. */
  readonly field: string | undefined;

  constructor(status: 400 | 404 | 409, message: string, field?: string) {
    super(message);
    this.name = "SandboxControlError";
    this.status = status;
    this.field = field;
  }
}
