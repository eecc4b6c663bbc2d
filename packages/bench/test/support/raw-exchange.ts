import { connect } from "node:net";

// Talking HTTP/1.1 to a server over a raw socket, for the tests of row 5's stand-ins: the bytes sent
// in given pieces, the bytes that came back, whole answers counted.

/** What came back: all of it, and what had come before the last piece was written. */
export interface Exchanged {
  received: string;
  beforeLastPiece: string;
}

/**
 * Writes `pieces` one at a time (text as UTF-8) (each after the last was flushed, the last after a pause), reads until
 * `answers` have come and then a little longer, so that an answer too many would be seen too.
 * `answersBeforeLast`: how many answers the pieces before the last must already bring; the last
 * piece waits for them (up to ANSWER_WAIT_MS, so a busy machine is not read as a missing answer),
 * then for the pause, so that an answer too many before it would be seen too.
 */
export function exchange(
  port: number,
  pieces: ReadonlyArray<string | Buffer>,
  answers: number,
  answersBeforeLast = 0,
): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let beforeLastPiece: string | undefined;
    let done = false;
    let onAnswer: (() => void) | undefined;
    socket.setEncoding("latin1");
    socket.on("error", reject);
    // A server that drops the connection fails the exchange at once, not at the test's timeout.
    socket.on("close", () => {
      if (!done) reject(new Error(`the connection closed after: ${JSON.stringify(received)}`));
    });
    // Resolves once `count` answers have come, or after ANSWER_WAIT_MS; then stops watching.
    const answersDue = (count: number) =>
      new Promise<void>((due) => {
        const stop = () => {
          clearTimeout(deadline);
          onAnswer = undefined;
          due();
        };
        const deadline = setTimeout(stop, ANSWER_WAIT_MS);
        onAnswer = () => {
          if (completeAnswers(received) >= count) stop();
        };
        onAnswer();
      });
    socket.on("data", (chunk: string) => {
      received += chunk;
      onAnswer?.();
      if (done || completeAnswers(received) < answers) return;
      done = true;
      setTimeout(() => {
        socket.destroy();
        resolve({ received, beforeLastPiece: beforeLastPiece ?? received });
      }, SETTLE_MS);
    });
    socket.on("connect", async () => {
      for (const [index, piece] of pieces.entries()) {
        if (index === pieces.length - 1 && index > 0) {
          if (answersBeforeLast > 0) await answersDue(answersBeforeLast);
          await new Promise((pause) => setTimeout(pause, SETTLE_MS));
          beforeLastPiece = received;
        }
        await new Promise<void>((flushed) =>
          socket.write(typeof piece === "string" ? Buffer.from(piece, "utf8") : piece, () => flushed()),
        );
      }
    });
  });
}

/** Long enough on loopback for an answer already written to arrive; a correct floor never sends one. */
export const SETTLE_MS = 20;

/** The longest the last piece waits for the answers due before it (a loaded CI machine takes more than SETTLE_MS). */
const ANSWER_WAIT_MS = 5_000;

/** How many whole answers `text` holds (a Content-Length body, or a chunked body ending in 0). */
export function completeAnswers(text: string): number {
  let count = 0;
  let rest = text;
  for (;;) {
    const headerEnd = rest.indexOf("\r\n\r\n");
    if (headerEnd < 0) return count;
    const head = rest.slice(0, headerEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    const end = length
      ? headerEnd + 4 + Number(length[1])
      : rest.indexOf("0\r\n\r\n", headerEnd + 4) + "0\r\n\r\n".length;
    if (end < headerEnd + 4 || rest.length < end) return count;
    count++;
    rest = rest.slice(end);
  }
}

export const normalised = (bytes: string) =>
  bytes
    .replace(/Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\n/g, "Date: <date>\r\n")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>");
