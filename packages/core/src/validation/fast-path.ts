// What the compiled fast path's parts share: the answer "not decided here", and the few zod 4
// internals they read (anything else makes the compiler leave a schema to zod).

/** "Not decided here": the caller parses with zod. */
export const FALL_BACK: unique symbol = Symbol("fall back to zod");
export type FastParser = (value: unknown) => unknown;

export interface CompileOptions {
  /** Freeze every object and array of the output as it is built. */
  freeze: boolean;
  /** Generate parsers as code (default); false takes the loops every runtime allows. */
  generateCode?: boolean;
}

/** One of a schema's checks, as zod 4 keeps it. */
export interface CheckLike {
  _zod: {
    def: {
      check: string;
      fn?: (value: unknown) => unknown;
      tx?: (value: unknown) => unknown;
      when?: (payload: Payload) => boolean;
    };
    check: (payload: Payload) => unknown;
  };
}

/** What zod passes a check or a transform. */
export interface Payload {
  value: unknown;
  issues: unknown[];
}

export const isThenable = (value: unknown) =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";

/** False once the runtime refused to build a function from text (a CSP without 'unsafe-eval'). */
let codeGenerationAllowed = true;

/**
 * `new Function(...parameters, body)`, or undefined where the runtime refuses to build code from
 * text: asked once, then never again (each refusal may also send a CSP violation report). The
 * bodies are the compiler's own templates, with indices and JSON-quoted keys written in.
 */
export function generatedFunction<F>(parameters: readonly string[], body: string): F | undefined {
  if (!codeGenerationAllowed) return undefined;
  try {
    return new Function(...parameters, body) as F;
  } catch (error) {
    if (error instanceof EvalError) codeGenerationAllowed = false;
    return undefined;
  }
}
