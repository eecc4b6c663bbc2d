import type { ErrorRequestHandler, RequestHandler } from "express";
import { renderErrorPage } from "../views/error.js";
import { type PageContextSource, pageContext } from "./page-context.js";

/** An error whose status, title and message are written for the visitor and can be shown as they are. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly visitorMessage: string,
  ) {
    super(`${status} ${title}`);
    this.name = "PageError";
  }
}

export interface ErrorLogger {
  error?: (message: string, meta?: Record<string, unknown>) => void;
}

/** The last route: an HTML 404 page. The requested path is not echoed back. */
export function notFoundPage(source: PageContextSource): RequestHandler {
  return async (req, res) => {
    const context = await pageContext(req, source);
    res
      .status(404)
      .type("html")
      .send(
        renderErrorPage(context, {
          status: 404,
          title: "Page not found",
          message: "We could not find that page. It may have moved, or the link may be mistyped.",
        }),
      );
  };
}

/**
 * The last error handler: an HTML page that never shows a stack, an error's own message or any
 * internal text. Only a `PageError` says what happened; anything else is logged here and shown as
 * a general apology.
 */
export function errorPage(source: PageContextSource, logger: ErrorLogger): ErrorRequestHandler {
  return async (error, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const shown = visibleError(error);
    if (shown.status >= 500) {
      logger.error?.("storefront: request failed", {
        method: req.method,
        path: req.path,
        error: error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error),
      });
    }
    let context: Awaited<ReturnType<typeof pageContext>> | undefined;
    try {
      context = await pageContext(req, source);
    } catch {
      context = undefined; // the page renders without the signed-in header
    }
    res.status(shown.status).type("html").send(renderErrorPage(context, shown));
  };
}

function visibleError(error: unknown): { status: number; title: string; message: string } {
  if (error instanceof PageError) {
    return { status: error.status, title: error.title, message: error.visitorMessage };
  }
  // body-parser and Express's own client errors (a broken form body, a malformed URL): their
  // messages are developer text, so only the status is kept.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return {
      status,
      title: "Bad request",
      message: "Your browser sent a request we could not read. Please go back and try again.",
    };
  }
  return {
    status: 500,
    title: "Something went wrong",
    message: "Something went wrong on our side. Please try again in a moment.",
  };
}
