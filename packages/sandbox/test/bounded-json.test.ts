import { describe, expect, it } from "vitest";
import { parseBoundedJson } from "../src/http/bounded-json.js";

// parseBoundedJson must accept exactly what JSON.parse accepts, and give the same value whenever
// nothing is shortened: it decides the answer for every large create body.

const NOTHING_WALKED = new Map<string, (value: unknown) => number>();

function jsonParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const VALID = [
  "{}",
  "[]",
  " { } ",
  "\t[\n1 ,\r2 ]\n",
  '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
  '{"order":{"items":[{"id":"x"},{}],"currency":"EUR"},"attemptSchedule":{"relative":["00:00:01"]}}',
  '{"ord\\u0065r":{"items":[]}}',
  '"a string with \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 and é"',
  "0",
  "-0",
  "-12.5e+3",
  "1E5",
  "0.25",
  "true",
  "null",
  '{"":""}',
  '{"a":{"a":{"a":[[[[]]]]}}}',
  '{"a":1,"a":2}',
  '"\ud800"',
];

const INVALID = [
  "",
  " ",
  "{",
  "}",
  "[",
  "]",
  "[1,]",
  "[,1]",
  "[1 2]",
  '{"a":1,}',
  '{"a" 1}',
  '{"a":}',
  "{a:1}",
  "{'a':1}",
  '{"a":1 "b":2}',
  '{,"a":1}',
  "01",
  "1.",
  ".5",
  "-",
  "+1",
  "1e",
  "NaN",
  "Infinity",
  "tru",
  "nul",
  "truex",
  '"unterminated',
  '"bad \\x escape"',
  '"bad \\u12 escape"',
  '"control \u0001 char"',
  "{}{}",
  "[] []",
  "\ufeff{}",
  "[1]]",
  '{"a":[}',
  '{"a":1]',
];

describe("parseBoundedJson", () => {
  it("accepts what JSON.parse accepts, with the same value", () => {
    for (const text of VALID)
      expect([text, parseBoundedJson(text, NOTHING_WALKED, 100)]).toEqual([text, jsonParse(text)]);
  });

  it("rejects what JSON.parse rejects", () => {
    for (const text of INVALID) {
      expect([text, jsonParse(text).ok, parseBoundedJson(text, NOTHING_WALKED, 100).ok]).toEqual([
        text,
        false,
        false,
      ]);
    }
  });

  it("reads 50,000 levels of nesting without recursion, and rejects one bracket missing", () => {
    const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
    expect(parseBoundedJson(deep, NOTHING_WALKED, 100).ok).toBe(true);
    expect(parseBoundedJson(deep.slice(1), NOTHING_WALKED, 100).ok).toBe(false);
  });

  it("agrees with JSON.parse on 5,000 random mutations of JSON documents", () => {
    let state = 12345;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state % n;
    };
    const alphabet = '{}[],:"\\ 0123456789-+.eEtrufalsn\n\tx';
    for (let round = 0; round < 5000; round++) {
      let text = VALID[next(VALID.length - 1)] ?? "{}";
      for (let edits = 1 + next(3); edits > 0; edits--) {
        const at = next(text.length + 1);
        const char = alphabet[next(alphabet.length)] ?? "";
        const op = next(3);
        text =
          op === 0
            ? text.slice(0, at) + char + text.slice(at)
            : op === 1
              ? text.slice(0, at) + text.slice(at + 1)
              : text.slice(0, at) + char + text.slice(at + 1);
      }
      const expected = jsonParse(text);
      const actual = parseBoundedJson(text, NOTHING_WALKED, 100);
      if (actual.ok !== expected.ok)
        throw new Error(`disagrees on ${JSON.stringify(text)}: JSON.parse ${expected.ok}`);
      expect(actual).toEqual(expected);
    }
  });

  it("replaces long arrays the schema does not walk by [], keeps short ones", () => {
    const long = Array(1000).fill({});
    const text = JSON.stringify({ padding: long, order: { items: [1, 2], notes: [long] }, short: [1, 2, 3] });
    const read = parseBoundedJson(text, NOTHING_WALKED, 100);
    expect(read).toEqual({
      ok: true,
      value: { padding: [], order: { items: [1, 2], notes: [[]] }, short: [1, 2, 3] },
    });
  });

  it("cuts a walked array right after the element that reaches the budget, wherever the key is", () => {
    const walked = new Map([[".order.items", (value: unknown) => (value === "bad" ? 1 : 0)]]);
    const items = ["ok", "bad", "ok", "bad", "bad", "ok", "bad"];
    const text = `{"attemptSchedule":{},"ord\\u0065r":{"currency":"EUR","items":${JSON.stringify(items)},"x":1}}`;
    expect(parseBoundedJson(text, walked, 3)).toEqual({
      ok: true,
      value: {
        attemptSchedule: {},
        order: { currency: "EUR", items: ["ok", "bad", "ok", "bad", "bad"], x: 1 },
      },
    });
    expect(parseBoundedJson(text, walked, 100)).toEqual(jsonParse(text));
  });

  it("still rejects a syntax error in the part of a walked array it drops", () => {
    const walked = new Map([[".order.items", () => 1]]);
    expect(parseBoundedJson('{"order":{"items":[{},{},{"a":}]}}', walked, 1).ok).toBe(false);
    expect(parseBoundedJson('{"order":{"items":[{},{},{"a":1}]}}', walked, 1)).toEqual({
      ok: true,
      value: { order: { items: [{}] } },
    });
  });
});
