// A JSON reader for large create-authorization bodies whose cost does not grow with the number of
// elements of an array. V8's JSON.parse of 1 MiB holding 350,000 empty objects takes 0.4 to 1 s on
// a busy machine (young-generation collections of the growing array), before validation even starts.
// Only a prefix of each array can matter to the answer (the first 100 issues), so this reader checks
// the syntax of the whole text in one pass and hands JSON.parse a shortened text:
// - an array the schema walks (`order.items`, `attemptSchedule.relative/absolute` of the root object)
//   ends after the element that brings its issues to the budget (each element is checked on its own);
// - any other array of more than SHORT_ARRAY elements becomes `[]`: the schema either ignores it
//   (an unknown field) or expects no array there, and reports the same issue for `[]`.
// The result is equal for every issue among the first `budget`.

/** Arrays of at most this many elements that the schema does not walk are kept as they are. */
const SHORT_ARRAY = 256;

/** Counts the issues of one element of a walked array (given its parsed value). */
export type ElementIssues = (value: unknown) => number;

export type BoundedJson = { ok: true; value: unknown } | { ok: false };

enum Kind {
  Object = 0,
  Array = 1,
}

interface Frame {
  kind: Kind;
  /** Path from the root object for the first two levels ("", ".order", ".order.items"), else "*". */
  path: string;
  /** For a walked array: counts the issues of an element. */
  walk: ElementIssues | undefined;
  issues: number;
  /** A walked array that has its budget: later elements are dropped. */
  full: boolean;
  /** Output length after the last element kept. */
  keepMark: number;
  /** Output length where the current element starts (walked arrays). */
  elementMark: number;
  /** Output length just before the "[" (for replacing the whole array). */
  openMark: number;
  elements: number;
  /** Object: the next string is a key. */
  expectKey: boolean;
  /** Object: the key of the member being read. */
  key: string;
  /** A value has been read since the last "," or the opening bracket. */
  hasValue: boolean;
}

const WHITESPACE = new Uint8Array(128);
for (const code of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[code] = 1;

/**
 * Parses `text`, shortening long arrays as described above. `walked` maps a path (".order.items")
 * to the issue counter of its elements. Not ok when `text` is not valid JSON.
 */
export function parseBoundedJson(
  text: string,
  walked: ReadonlyMap<string, ElementIssues>,
  budget: number,
): BoundedJson {
  const out: string[] = [];
  let copyFrom = 0;
  const flush = (to: number) => {
    if (to > copyFrom) out.push(text.slice(copyFrom, to));
    copyFrom = to;
  };
  const stack: Frame[] = [];
  let i = 0;
  let rootRead = false;
  const length = text.length;

  const skipWhitespace = () => {
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code >= 128 || WHITESPACE[code] !== 1) break;
      i++;
    }
  };

  /** Reads a string starting at the quote; false when it is not a valid JSON string. */
  const readString = (): boolean => {
    i++;
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code === 0x22) {
        i++;
        return true;
      }
      if (code < 0x20) return false;
      if (code === 0x5c) {
        const escaped = text.charCodeAt(i + 1);
        if (escaped === 0x75) {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false;
          i += 6;
        } else if ('"\\/bfnrt'.includes(text[i + 1] ?? "")) {
          i += 2;
        } else {
          return false;
        }
        continue;
      }
      i++;
    }
    return false;
  };

  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  const childPath = (parent: Frame | undefined): string => {
    if (parent === undefined) return "";
    if (
      parent.kind === Kind.Object &&
      (parent.path === "" || parent.path === ".order" || parent.path === ".attemptSchedule")
    ) {
      return `${parent.path}.${parent.key}`;
    }
    return "*";
  };

  /** Called when a value of the frame on top has ended (the cursor is just after it). */
  const endElement = (frame: Frame, at: number): boolean => {
    if (frame.walk === undefined) return true;
    if (frame.full) {
      out.length = frame.keepMark;
      copyFrom = at;
      return true;
    }
    flush(at);
    let value: unknown;
    try {
      value = JSON.parse(out.slice(frame.elementMark).join(""));
    } catch {
      return false;
    }
    frame.issues += frame.walk(value);
    if (frame.issues >= budget) {
      frame.full = true;
      frame.keepMark = out.length;
    }
    return true;
  };

  /** After a complete value: the enclosing frame records it. */
  const valueRead = (): boolean => {
    const frame = stack[stack.length - 1];
    if (frame === undefined) {
      if (rootRead) return false;
      rootRead = true;
      return true;
    }
    if (frame.hasValue) return false;
    frame.hasValue = true;
    return true;
  };

  for (;;) {
    skipWhitespace();
    if (i >= length) break;
    const code = text.charCodeAt(i);
    const top = stack[stack.length - 1];

    if (top?.kind === Kind.Object && top.expectKey) {
      if (code === 0x7d && !top.hasValue && top.key === "") {
        // "}" of an empty object
      } else {
        if (code !== 0x22) return { ok: false };
        const start = i;
        if (!readString()) return { ok: false };
        // Keys are decoded only where the path matters (an escaped "order" is still "order").
        top.key =
          top.path === "" || top.path === ".order" || top.path === ".attemptSchedule"
            ? (JSON.parse(text.slice(start, i)) as string)
            : "?";
        skipWhitespace();
        if (text.charCodeAt(i) !== 0x3a) return { ok: false };
        i++;
        top.expectKey = false;
        continue;
      }
    }

    if (code === 0x7b || code === 0x5b) {
      if (top?.hasValue) return { ok: false };
      if (top === undefined && rootRead) return { ok: false };
      const path = childPath(top);
      const walk = code === 0x5b ? walked.get(path) : undefined;
      flush(i);
      const frame: Frame = {
        kind: code === 0x7b ? Kind.Object : Kind.Array,
        path,
        walk,
        issues: 0,
        full: false,
        keepMark: 0,
        elementMark: 0,
        openMark: out.length,
        elements: 0,
        expectKey: code === 0x7b,
        key: "",
        hasValue: false,
      };
      i++;
      if (walk !== undefined) {
        flush(i);
        frame.elementMark = out.length;
      }
      stack.push(frame);
      continue;
    }

    if (code === 0x2c) {
      if (top === undefined || !top.hasValue) return { ok: false };
      if (top.kind === Kind.Array) {
        top.elements++;
        if (!endElement(top, i)) return { ok: false };
        i++;
        if (top.walk !== undefined && !top.full) {
          flush(i);
          top.elementMark = out.length;
        }
      } else {
        i++;
        top.expectKey = true;
        top.key = "";
      }
      top.hasValue = false;
      // No trailing comma: a value (or key) must follow.
      skipWhitespace();
      const next = text.charCodeAt(i);
      if (next === 0x5d || next === 0x7d) return { ok: false };
      continue;
    }

    if (code === 0x5d || code === 0x7d) {
      const closesArray = code === 0x5d;
      if (top === undefined || (top.kind === Kind.Array) !== closesArray) return { ok: false };
      if (!closesArray && !top.hasValue && !top.expectKey) return { ok: false };
      if (top.hasValue) {
        top.elements++;
        if (closesArray && !endElement(top, i)) return { ok: false };
      }
      i++;
      stack.pop();
      if (closesArray && top.walk === undefined && top.elements > SHORT_ARRAY) {
        out.length = top.openMark;
        out.push("[]");
        copyFrom = i;
      }
      if (!valueRead()) return { ok: false };
      continue;
    }

    // A scalar value.
    if (top?.kind === Kind.Object && top.expectKey) return { ok: false };
    if (code === 0x22) {
      if (!readString()) return { ok: false };
    } else if (code === 0x74 && text.startsWith("true", i)) {
      i += 4;
    } else if (code === 0x66 && text.startsWith("false", i)) {
      i += 5;
    } else if (code === 0x6e && text.startsWith("null", i)) {
      i += 4;
    } else {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (match === null || match[0] === "") return { ok: false };
      i += match[0].length;
    }
    if (!valueRead()) return { ok: false };
  }

  if (stack.length > 0 || !rootRead) return { ok: false };
  flush(length);
  try {
    return { ok: true, value: JSON.parse(out.join("")) };
  } catch {
    return { ok: false };
  }
}
