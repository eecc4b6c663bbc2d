/** A control call that cannot be done: bad input (400), unknown merchant or token (404), duplicate id (409). */
export class SandboxControlError extends Error {
  readonly status: 400 | 404 | 409;

  constructor(status: 400 | 404 | 409, message: string) {
    super(message);
    this.name = "SandboxControlError";
    this.status = status;
  }
}
