import type { RequestHandler } from "express";
import { isCheckoutComplete } from "../charges/state-machine.js";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import type { ChargeRecord } from "../stores/types.js";
import type { RouteContext } from "./context.js";
import { ownedCharge } from "./owned-charge.js";

/**
 * GET /charges/:authorizationId/events: server-sent events. The current state first, then each
 * change (`event: charge`, `id:` the charge's version); the stream ends once checkout is complete
 * (failed, or captured with auto capture, or authorized with manual capture, or anything later),
 * when the client goes away, or after `liveUpdates.maxDurationMs`.
 * A complete checkout is announced with a last `event: end` (the final charge as data) before the
 * stream ends: a browser's EventSource reconnects about 3 s after any end of the stream unless the
 * page calls close(). The other endings are not announced: after `maxDurationMs` or
 * `router.close()`, reconnecting (to this instance or another) is what the client should do.
 * Changes made in this process arrive at once; those of other instances by polling the store.
 */
export function eventsRoute(ctx: RouteContext): RequestHandler {
  const { options, notifier, streams, streamQuota } = ctx;
  const { pollIntervalMs, heartbeatMs, maxDurationMs } = options.liveUpdates;

  return asyncHandler(async (req, res) => {
    const charge = await ownedCharge(req, options);
    // The client may have left while the charge was read: its "close" has fired already, so a slot
    // taken now would never be given back (until maxDurationMs).
    if (req.destroyed || res.destroyed || res.closed) return;
    const release = streamQuota.acquire(charge.customerId);
    const authorizationId = charge.authorizationId!;
    res.status(200).set({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no", // nginx: do not buffer the stream
    });
    res.flushHeaders();

    let sentVersion = 0;
    let closed = false;
    const send = (current: ChargeRecord) => {
      if (closed || current.version <= sentVersion) return;
      // A new attempt replaced this authorization: its stream has nothing more to say.
      if (current.authorizationId !== authorizationId) return close();
      sentVersion = current.version;
      const data = JSON.stringify(chargeView(current));
      res.write(`id: ${current.version}\nevent: charge\ndata: ${data}\n\n`);
      if (isCheckoutComplete(current)) {
        // Nothing more will happen by itself: tell the client to close(), or it would reconnect.
        res.write(`event: end\ndata: ${data}\n\n`);
        close();
      }
    };
    const refresh = () => {
      options.store.findByReference(charge.reference).then(
        (current) => current && send(current),
        (error) => options.logger.warn?.("purchase-auth: live update poll failed", { error: String(error) }),
      );
    };
    const poll = setInterval(refresh, pollIntervalMs);
    const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), heartbeatMs);
    const deadline = setTimeout(() => close(), maxDurationMs);
    const unsubscribe = notifier.subscribe(charge.reference, send);
    function close() {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      clearInterval(heartbeat);
      clearTimeout(deadline);
      unsubscribe();
      streams.delete(close);
      release();
      res.end();
    }
    streams.add(close);
    res.on("close", close); // the client went away
    send(charge);
    refresh(); // whatever changed between the first read and the subscription
  });
}
