import {
  type CheckLike,
  FALL_BACK,
  type FastParser,
  generatedFunction,
  isThenable,
  type Payload,
} from "./fast-path.js";

// A node's checks (refinements, trims, length limits) run on its parsed value, in order, as zod
// runs them. Written as code for each node where the runtime allows it: a loop over the checks
// calls every check of every field from one place, which V8 cannot inline: that cost about a tenth
// of a 1-item request's whole check, and a fifth at 500 items.

/**
 * `parse`, then the node's checks on its value; FALL_BACK as soon as one is not sure. As code unless
 * `generateCode` is false (`CompileOptions.generateCode`) or the runtime does not build it.
 */
export function withChecksOf(
  checks: CheckLike[] | undefined,
  parse: FastParser,
  generateCode: boolean,
): FastParser {
  if (!checks || checks.length === 0) return parse;
  return (generateCode && checksAsCode(checks, parse)) || checksInLoop(checks, parse);
}

function checksInLoop(checks: CheckLike[], parse: FastParser): FastParser {
  const steps = checks.map(compileCheck);
  return (value) => {
    let current = parse(value);
    for (let index = 0; index < steps.length && current !== FALL_BACK; index++) {
      current = (steps[index] as FastParser)(current);
    }
    return current;
  };
}

/**
 * The same steps as one function with a call of its own for each check: refinements and rewrites
 * called directly. Only indices are written into the code, never a name from a schema. Undefined
 * where code cannot be generated (a Content-Security-Policy without 'unsafe-eval'). Never shared
 * between nodes with the same checks: each node's own function is what gives each call its site.
 */
function checksAsCode(checks: CheckLike[], parse: FastParser): FastParser | undefined {
  const functions: unknown[] = [];
  const definitions: unknown[] = [];
  const lines = checks.map((check, index) => {
    const { def } = check._zod;
    definitions.push(def);
    // Refinements and rewrites are called as zod calls them: as methods of their definition.
    const direct = directCallOf(def);
    functions.push(direct?.fn ?? compileCheck(check));
    switch (direct?.kind) {
      case "refinement": // as compileCheck's: passed when the answer is truthy and not a promise
        return `r = f${index}.call(d${index}, c); if (!r || r instanceof Promise) return FALL_BACK;`;
      case "rewrite":
        return `c = f${index}.call(d${index}, c);`;
      default:
        return `c = f${index}(c); if (c === FALL_BACK) return c;`;
    }
  });
  const names = (prefix: string) => functions.map((_, index) => `${prefix}${index}`).join(", ");
  const body = `const [${names("f")}] = functions;
  const [${names("d")}] = definitions;
  return (value) => {
    let c = parse(value);
    if (c === FALL_BACK) return c;
    let r;
    ${lines.join("\n    ")}
    return c;
  };`;
  const factory = generatedFunction<
    (
      parse: FastParser,
      functions: unknown[],
      definitions: unknown[],
      fallBack: typeof FALL_BACK,
    ) => FastParser
  >(["parse", "functions", "definitions", "FALL_BACK"], body);
  return factory?.(parse, functions, definitions, FALL_BACK);
}

/**
 * One check as a step from the value to the value it passes on (a trim rewrites it), or FALL_BACK.
 * Refinements and rewrites are called directly (as methods of their definition, as zod calls
 * them), without an object per call; every other check (length limits, which zod counts in code
 * points, superRefine, checks with a `when`) runs through zod's own check function on a payload
 * like the one zod passes.
 */
function compileCheck(check: CheckLike): FastParser {
  const { def, check: run } = check._zod;
  const { when } = def;
  const direct = directCallOf(def);
  if (direct?.kind === "refinement") {
    const { fn } = direct;
    return (value) => {
      const result = fn.call(def, value);
      // As zod tells a refinement's promise: by instanceof (any other truthy answer passes).
      return result && !(result instanceof Promise) ? value : FALL_BACK;
    };
  }
  if (direct?.kind === "rewrite") {
    const { fn } = direct;
    return (value) => fn.call(def, value);
  }
  return (value) => {
    const payload: Payload = { value, issues: [] };
    if (when && !when(payload)) return value;
    const result = run(payload);
    return isThenable(result) || payload.issues.length > 0 ? FALL_BACK : payload.value;
  };
}

/** A refinement or a rewrite without a `when`: the one function zod would call, called directly here. */
function directCallOf(
  def: CheckLike["_zod"]["def"],
): { kind: "refinement" | "rewrite"; fn: (value: unknown) => unknown } | undefined {
  if (def.when) return undefined;
  if (def.check === "custom" && def.fn) return { kind: "refinement", fn: def.fn };
  if (def.check === "overwrite" && def.tx) return { kind: "rewrite", fn: def.tx };
  return undefined;
}
