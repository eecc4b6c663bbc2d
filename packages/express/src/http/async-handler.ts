import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * Sends an async handler's rejection to `next(err)`. Express 5 does this by itself; Express 4 does
 * not, and would leave the request hanging.
 */
export function asyncHandler(
  handler: (req: Request, res: Response, next: NextFunction) => Promise<void>,
): RequestHandler {
  return (req, res, next) => {
    handler(req, res, next).catch(next);
  };
}
