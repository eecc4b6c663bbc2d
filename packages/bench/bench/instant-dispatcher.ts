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
  // Ids from a counter, in GUID form: unique as the service's are (the adapter's store refuses an
  // authorization id twice), and cheap, so the stand-in's own work hardly counts on core's side.
  let next = 0;
  const newId = () => `00000000-0000-4000-8000-${(next++).toString(16).padStart(12, "0")}`;
  const dispatcher = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      setImmediate(() => {
        const body = cannedAnswer(options.path, newId);
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
