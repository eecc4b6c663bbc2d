import type { SeededRandom } from "../src/core/prng.js";

/** Characters JSON.stringify escapes, or writes as they are although a hand-written escaper might not. */
const AWKWARD = [
  '"',
  "\\",
  "/",
  " ",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u00e9",
  "\u2028",
  "\ud83d",
  "\ude00",
  "\ud83d\ude00",
  "中",
];

/**
 * Text for checking hand-written JSON against JSON.stringify: up to `maxLength` characters, mostly
 * from `common`, and an awkward one (quotes, backslashes, controls, lone surrogates…) at `awkwardShare`.
 */
export function awkwardText(
  random: SeededRandom,
  common: string,
  { maxLength, awkwardShare }: { maxLength: number; awkwardShare: number },
): string {
  const length = Math.floor(random.next() * maxLength);
  let text = "";
  for (let index = 0; index < length; index++) {
    text +=
      random.next() < awkwardShare
        ? AWKWARD[Math.floor(random.next() * AWKWARD.length)]
        : common[Math.floor(random.next() * common.length)];
  }
  return text;
}
