// Every page is built with the `html` tag below, which escapes every interpolated value unless it
// is already `SafeHtml`. Customer names, references, reasons and query strings can therefore never
// become markup (no XSS), without anyone remembering to escape them.

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  // false, null and undefined render as nothing, so `${condition && html`…`}` works.
  if (value === null || value === undefined || value === false || value === true) return "";
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let index = 0; index < values.length; index += 1) {
    out += render(values[index]) + strings[index + 1]!;
  }
  return new SafeHtml(out);
}

/** Marks a constant of this code base (such as an SVG drawing) as markup. Never for request data. */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
