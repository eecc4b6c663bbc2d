import { request } from "undici";
import type { Customer } from "./shop.js";

export interface StreamedEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Opens `GET …/events` and collects the server-sent events until the server ends the stream.
 * `onEvent` sees each as it arrives (to move the sandbox on at the right moment).
 */
export async function readEventStream(
  app: { url: string },
  path: string,
  customer: Customer,
  onEvent: (event: StreamedEvent, index: number) => void | Promise<void> = () => {},
): Promise<{ status: number; contentType: string | undefined; events: StreamedEvent[] }> {
  const response = await request(`${app.url}/payments${path}`, {
    headers: { "x-session": customer.session },
  });
  const events: StreamedEvent[] = [];
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += chunk.toString();
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const event: StreamedEvent = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue; // comment (heartbeat)
        const [field, ...rest] = line.split(": ");
        const value = rest.join(": ");
        if (field === "id") event.id = value;
        else if (field === "event") event.event = value;
        else if (field === "data") event.data = value;
      }
      if (event.event === undefined && event.data === "") continue;
      events.push(event);
      await onEvent(event, events.length - 1);
    }
  }
  const contentType = response.headers["content-type"];
  return {
    status: response.statusCode,
    contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    events,
  };
}
