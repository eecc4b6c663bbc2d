import type { Response } from "express";

/**
 * Answers `body` as JSON, as `res.status(status).json(body)` would, minus what Express adds that
 * a payment answer must not have: an ETag (a SHA-1 of every answer body, and a 304 to a request
 * that repeats it) and caching. A charge changes with every webhook, so its answers are never
 * stored (`Cache-Control: no-store`). HEAD gets the headers only (node:http leaves the body out).
 */
export function answerJson(res: Response, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Length", Buffer.byteLength(json));
  res.end(json);
}
