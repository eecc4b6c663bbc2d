import type { Dispatcher } from "undici";
import { cannedAnswer } from "./wire.js";

// A dispatcher that answers core's token and create requests itself, on the next turn of the event
// loop, with what the sandbox would answer (200, new ids): no socket, no HTTP, no other process. Over
// it, a charge costs only the JavaScript around the request, so what the Express adapter adds to
// core's create can be measured without the network's noise. A measuring device, not a service:
// anything but those two requests is answered 404.

const controller = {
  abort() {},
  pause() {},
  resume() {},
  aborted: false,
  paused: false,
  reason: null,
};

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export function instantDispatcher(): Dispatcher {
  const dispatcher = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      setImmediate(() => {
        const body = cannedAnswer(options.path);
        handler.onRequestStart?.(controller, {});
        handler.onResponseStart?.(controller, body === undefined ? 404 : 200, JSON_HEADERS, "");
        if (body !== undefined) handler.onResponseData?.(controller, Buffer.from(body));
        handler.onResponseEnd?.(controller, {});
      });
      return true;
    },
    close: async () => {},
    destroy: async () => {},
  };
  // Core calls dispatch() only (close() when it owns the dispatcher, which it does not here).
  return dispatcher as unknown as Dispatcher;
}
