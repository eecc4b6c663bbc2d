/**
 * A transport's error, kept as the cause of one of ours, with every secret it quotes cut out: the
 * same name, code and message otherwise. undici's MockAgent quotes the request it could not match
 * (the token request's form with the client secret, the bearer header); a socket's own errors quote
 * none and are kept as they are.
 */
export function secretFreeCause(error: unknown, secrets: ReadonlyArray<string | undefined>): unknown {
  if (!(error instanceof Error)) return error;
  const quoted = forms(secrets).filter((form) => quotes(error, form));
  if (quoted.length === 0) return error;
  const cut = (text: string) => quoted.reduce((result, form) => result.split(form).join("[redacted]"), text);
  const clean = new Error(cut(error.message));
  clean.name = error.name;
  clean.stack = cut(error.stack ?? "");
  const { code } = error as { code?: unknown };
  if (code !== undefined) Object.assign(clean, { code });
  return clean;
}

/** Each secret as it may be quoted: as it is, and as a form or URL encodes it. */
function forms(secrets: ReadonlyArray<string | undefined>): string[] {
  const result: string[] = [];
  for (const secret of secrets) {
    if (secret === undefined || secret.length === 0) continue;
    result.push(secret);
    const encoded = new URLSearchParams({ s: secret }).toString().slice(2);
    if (encoded !== secret) result.push(encoded);
  }
  return result;
}

function quotes(error: Error, form: string): boolean {
  return error.message.includes(form) || (error.stack?.includes(form) ?? false);
}
