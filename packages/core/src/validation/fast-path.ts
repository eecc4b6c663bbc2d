import { z } from "zod";

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

/** Whether the runtime builds functions from text: probed once, as zod probes it (`allowsEval`). */
let codeGeneration: boolean | undefined;

function codeGenerationAllowed(): boolean {
  // zod's own switch for runtimes without eval: when the app set it, nothing is generated here either.
  if (z.config().jitless === true) return false;
  if (codeGeneration === undefined) {
    try {
      new Function("");
      codeGeneration = true;
    } catch {
      // A CSP without 'unsafe-eval' throws an EvalError, a locked-down realm (SES) a TypeError:
      // either way, asked once (each refusal may also send a CSP violation report).
      codeGeneration = false;
    }
  }
  return codeGeneration;
}

/**
 * `new Function(...parameters, body)`, or undefined where the runtime does not build code from
 * text. The bodies are the compiler's own templates, with indices and JSON-quoted keys written in;
 * one that fails to build is a bug, and its node takes the loop every runtime allows.
 */
export function generatedFunction<F>(parameters: readonly string[], body: string): F | undefined {
  if (!codeGenerationAllowed()) return undefined;
  try {
    return new Function(...parameters, body) as F;
  } catch {
    return undefined;
  }
}
