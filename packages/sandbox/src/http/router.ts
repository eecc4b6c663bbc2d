/** Path parameters by name, already URI-decoded. */
export type RouteParams = Readonly<Record<string, string>>;

export type RouteMatch<R> =
  | { kind: "found"; route: R; params: RouteParams; template: string }
  | { kind: "method_not_allowed"; allow: readonly string[] }
  | { kind: "not_found" };

interface Entry<R> {
  method: string;
  template: string;
  /** Literal segments, or `{name}` for a parameter. */
  segments: readonly string[];
  route: R;
}

/**
 * Matches method + path against templates like "/manage/orders/{orderId}/capture". A path that
 * matches with another method gives 405 with the allowed methods, an unknown path 404.
 */
export class Router<R> {
  readonly #entries: Entry<R>[] = [];
  /**
   * For each template without parameters, taken as a path: every entry that matches it, in order, as
   * the answer `match` gives for it. Built on first use; the same answers as the scan, without it.
   */
  #literal: Map<string, ReadonlyArray<{ method: string; match: RouteMatch<R> }>> | undefined;

  add(method: string, template: string, route: R): this {
    this.#entries.push({ method: method.toUpperCase(), template, segments: template.split("/"), route });
    this.#literal = undefined;
    return this;
  }

  match(method: string, pathname: string): RouteMatch<R> {
    this.#literal ??= this.#literalPaths();
    const known = this.#literal.get(pathname);
    if (known !== undefined) {
      for (const found of known) if (found.method === method) return found.match;
      const allow = known.map((found) => found.method);
      return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
    }
    return this.#scan(method, pathname);
  }

  #literalPaths(): Map<string, ReadonlyArray<{ method: string; match: RouteMatch<R> }>> {
    const paths = new Map<string, Array<{ method: string; match: RouteMatch<R> }>>();
    for (const { template } of this.#entries) {
      if (template.includes("{") || paths.has(template)) continue;
      const segments = template.split("/");
      const matches: Array<{ method: string; match: RouteMatch<R> }> = [];
      for (const entry of this.#entries) {
        const params = matchSegments(entry.segments, segments);
        if (params === undefined) continue;
        const match = {
          kind: "found",
          route: entry.route,
          params: Object.freeze(params),
          template: entry.template,
        };
        matches.push({ method: entry.method, match: Object.freeze(match) as RouteMatch<R> });
      }
      paths.set(template, matches);
    }
    return paths;
  }

  #scan(method: string, pathname: string): RouteMatch<R> {
    const segments = pathname.split("/");
    const allow: string[] = [];
    for (const entry of this.#entries) {
      const params = matchSegments(entry.segments, segments);
      if (params === undefined) continue;
      if (entry.method === method)
        return { kind: "found", route: entry.route, params, template: entry.template };
      allow.push(entry.method);
    }
    return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
  }
}

function matchSegments(template: readonly string[], actual: readonly string[]): RouteParams | undefined {
  if (template.length !== actual.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let index = 0; index < template.length; index++) {
    const expected = template[index]!;
    const segment = actual[index]!;
    if (expected.startsWith("{") && expected.endsWith("}")) {
      const value = decodeSegment(segment);
      if (value === undefined || value === "") return undefined;
      params ??= {};
      params[expected.slice(1, -1)] = value;
    } else if (expected !== segment) {
      return undefined;
    }
  }
  return params ?? {};
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The resource a request addresses, independent of how its path was spelled: the template with each
 * parameter decoded and in lower case ("/manage/orders/{orderId}/capture" with "%41BC…" → ".../abc…").
 * Ids are GUIDs, looked up case-insensitively, so every spelling that reaches the same resource gives
 * the same key. Idempotency keys are scoped by it.
 */
export function resourceOf(template: string, params: RouteParams): string {
  if (!template.includes("{")) return template;
  return template.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent((params[name] ?? "").toLowerCase()),
  );
}
