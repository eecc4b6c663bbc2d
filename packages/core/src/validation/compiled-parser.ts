import type { z } from "zod";
import { withChecksOf } from "./compiled-checks.js";
import {
  type CheckLike,
  type CompileOptions,
  FALL_BACK,
  type FastParser,
  generatedFunction,
  isThenable,
  type Payload,
} from "./fast-path.js";

// A fast path compiled once from a zod schema: the same schema objects, the same check functions,
// without zod's general machinery (issue collection, paths, async support) around them. It answers
// only "valid, and here is exactly what zod would return" or "not sure": every invalid input, and
// every schema construct it does not know, goes to zod itself, which then reports the issues. So the
// rules exist once (the schemas), and the fast path can only be slower than zod, never different.
// A property test holds it to zod's output on generated and mutated inputs
// (test/compiled-parser.test.ts).

export { FALL_BACK, type FastParser } from "./fast-path.js";

/** The zod 4 internals this compiler reads; anything else makes it fall back to zod. */
interface Internals {
  def: {
    type: string;
    checks?: CheckLike[];
    shape?: Record<string, z.ZodType>;
    catchall?: unknown;
    element?: z.ZodType;
    innerType?: z.ZodType;
    in?: z.ZodType;
    out?: z.ZodType;
    coerce?: boolean;
    transform?: (value: unknown, payload: Payload) => unknown;
  };
  traits: ReadonlySet<string>;
  optin?: "optional" | "defaulted";
  optout?: "optional";
  values?: ReadonlySet<unknown>;
}

const internals = (schema: z.ZodType) => (schema as unknown as { _zod: Internals })._zod;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const compiled = new WeakMap<z.ZodType, Map<string, FastParser>>();

/** The fast parser of `schema`, compiled on first use and kept with the schema. */
export function fastParserOf(schema: z.ZodType, options: CompileOptions = { freeze: false }): FastParser {
  let bySettings = compiled.get(schema);
  if (!bySettings) {
    bySettings = new Map();
    compiled.set(schema, bySettings);
  }
  const settings = `${options.freeze} ${options.generateCode !== false}`;
  let parser = bySettings.get(settings);
  if (!parser) {
    parser = compileNode(schema, options);
    bySettings.set(settings, parser);
  }
  return parser;
}

/**
 * `schema.safeParse(input)`, with valid input taken by the compiled fast path: the same result
 * (zod's own for invalid input). For services and tools that parse with core's schemas.
 */
export function safeParseFast<T extends z.ZodType>(
  schema: T,
  input: unknown,
): z.ZodSafeParseResult<z.output<T>> {
  const fast = fastParserOf(schema)(input);
  return fast === FALL_BACK ? schema.safeParse(input) : { success: true, data: fast as z.output<T> };
}

/**
 * The zod classes this compiler reproduces, by their trait names. A schema with any other trait (a
 * string format such as z.email(), which is its own check; exactOptional; anything newer) is left
 * to zod as a whole: the compiler fails closed.
 */
const KNOWN_TRAITS = new Set([
  ...[
    "Type",
    "String",
    "Boolean",
    "Enum",
    "Literal",
    "Optional",
    "Nullable",
    "Pipe",
    "Transform",
    "Array",
    "Object",
  ].flatMap((name) => [`Zod${name}`, `$Zod${name}`]),
  "_ZodString",
  "$ZodObjectJIT",
]);

/** Schemas being compiled right now: one met again is recursive, and zod parses it. */
const compiling = new Set<z.ZodType>();

function compileNode(schema: z.ZodType, options: CompileOptions): FastParser {
  const zod = internals(schema);
  if (compiling.has(schema) || [...zod.traits].some((trait) => !KNOWN_TRAITS.has(trait)))
    return delegate(schema);
  compiling.add(schema);
  try {
    return compileKnownNode(schema, zod, options);
  } finally {
    compiling.delete(schema);
  }
}

function compileKnownNode(schema: z.ZodType, zod: Internals, options: CompileOptions): FastParser {
  const { def } = zod;
  const withChecks = (parse: FastParser) => withChecksOf(def.checks, parse, options.generateCode !== false);
  switch (def.type) {
    case "string":
      if (def.coerce) return delegate(schema);
      return withChecks((value) => (typeof value === "string" ? value : FALL_BACK));
    case "boolean":
      if (def.coerce) return delegate(schema);
      return withChecks((value) => (typeof value === "boolean" ? value : FALL_BACK));
    case "enum":
    case "literal": {
      const values = zod.values;
      if (!values) return delegate(schema);
      return withChecks((value) => (values.has(value) ? value : FALL_BACK));
    }
    case "optional": {
      const inner = def.innerType;
      if (!inner || internals(inner).optin !== undefined) return delegate(schema);
      const parseInner = compileNode(inner, options);
      return withChecks((value) => (value === undefined ? undefined : parseInner(value)));
    }
    case "nullable": {
      if (!def.innerType) return delegate(schema);
      const parseInner = compileNode(def.innerType, options);
      return withChecks((value) => (value === null ? null : parseInner(value)));
    }
    case "pipe": {
      if (!def.in || !def.out) return delegate(schema);
      const first = compileNode(def.in, options);
      const second = compileNode(def.out, options);
      return withChecks((value) => {
        const middle = first(value);
        return middle === FALL_BACK ? FALL_BACK : second(middle);
      });
    }
    case "transform":
      return compileTransform(schema);
    case "array":
      return withChecks(compileArray(schema, options));
    case "object":
      return withChecks(compileObject(schema, options));
    default:
      return delegate(schema);
  }
}

/** A construct this compiler does not know: zod parses that part (still exact, just not faster). */
function delegate(schema: z.ZodType): FastParser {
  return (value) => {
    const result = schema.safeParse(value);
    return result.success ? result.data : FALL_BACK;
  };
}

function compileTransform(schema: z.ZodType): FastParser {
  const { transform } = internals(schema).def;
  if (!transform) return delegate(schema);
  return (value) => {
    // The context zod gives a transform: any issue it adds sends the value to zod.
    const payload: Payload & { addIssue(issue: unknown): void } = {
      value,
      issues: [],
      addIssue(issue) {
        this.issues.push(issue);
      },
    };
    const output = transform(value, payload);
    return payload.issues.length > 0 || isThenable(output) ? FALL_BACK : output;
  };
}

function compileArray(schema: z.ZodType, options: CompileOptions): FastParser {
  const { element } = internals(schema).def;
  if (!element) return delegate(schema);
  const parseElement = compileNode(element, options);
  return (value) => {
    if (!Array.isArray(value)) return FALL_BACK;
    const output = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      const parsed = parseElement(value[index]);
      if (parsed === FALL_BACK) return FALL_BACK;
      output[index] = parsed;
    }
    return options.freeze ? Object.freeze(output) : output;
  };
}

interface CompiledField {
  key: string;
  parse: FastParser;
  /** zod keeps an absent key absent (no issue) only when the field is optional in and out. */
  optional: boolean;
}

function compileObject(schema: z.ZodType, options: CompileOptions): FastParser {
  const { shape, catchall } = internals(schema).def;
  // Only the default "strip" object: unknown keys are dropped, none is an error.
  if (!shape || catchall !== undefined) return delegate(schema);
  // Writing "__proto__" would set the output's prototype, where zod skips the key; and the fields
  // are read by their string keys, so a symbol-keyed field would be skipped, never checked.
  if (Object.hasOwn(shape, "__proto__") || Object.getOwnPropertySymbols(shape).length > 0)
    return delegate(schema);
  const fields: CompiledField[] = [];
  for (const [key, field] of Object.entries(shape)) {
    const { optin, optout } = internals(field);
    if (optin === "defaulted") return delegate(schema);
    fields.push({
      key,
      parse: compileNode(field, options),
      optional: optin === "optional" && optout === "optional",
    });
  }
  return (
    (options.generateCode !== false && objectParserWithFixedKeys(fields, options)) ||
    objectParserWithKeyLoop(fields, options)
  );
}

/**
 * zod's rules for each key: an absent optional key stays absent; an absent required one is an
 * issue; a present key is kept even when its value is undefined. Output keys in the shape's order.
 */
function objectParserWithKeyLoop(fields: CompiledField[], options: CompileOptions): FastParser {
  return (value) => {
    if (!isObject(value)) return FALL_BACK;
    const output: Record<string, unknown> = {};
    for (const field of fields) {
      if (!(field.key in value)) {
        if (field.optional) continue;
        return FALL_BACK;
      }
      const parsed = field.parse(value[field.key]);
      if (parsed === FALL_BACK) return FALL_BACK;
      output[field.key] = parsed;
    }
    return options.freeze ? Object.freeze(output) : output;
  };
}

/**
 * The same rules with the key names written into the code, as zod's own object parser does: V8 then
 * reads and writes each key through a cache of its own instead of a generic keyed lookup (about
 * three times faster). Undefined where code cannot be generated (a Content-Security-Policy without
 * 'unsafe-eval', some edge runtimes): the loop above is used there.
 */
function objectParserWithFixedKeys(fields: CompiledField[], options: CompileOptions): FastParser | undefined {
  const lines = fields.map((field, index) => {
    const key = JSON.stringify(field.key);
    const absent = field.optional ? "" : " else return FALL_BACK;";
    return `if (${key} in value) { const v = parsers[${index}](value[${key}]); if (v === FALL_BACK) return FALL_BACK; output[${key}] = v; }${absent}`;
  });
  const body = `return (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return FALL_BACK;
    const output = {};
    ${lines.join("\n    ")}
    return ${options.freeze ? "Object.freeze(output)" : "output"};
  };`;
  const factory = generatedFunction<(parsers: FastParser[], fallBack: typeof FALL_BACK) => FastParser>(
    ["parsers", "FALL_BACK"],
    body,
  );
  return factory?.(
    fields.map((field) => field.parse),
    FALL_BACK,
  );
}
