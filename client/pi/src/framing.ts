// Newline-delimited JSON framing: one JSON text per line, "\n"-terminated ("\r\n" tolerated).

/** The default cap on one incoming frame: 64 MiB (a daemon frame is at most 20 MiB by default). */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** Thrown by LineDecoder.push when a frame grows past the cap; the stream cannot be trusted after. */
export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";
}

/**
 * Splits a byte stream into lines. Holds at most `maxFrameBytes` of an unfinished line: a line
 * longer than that makes `push` throw FrameTooLargeError instead of buffering without bound.
 * Lines are decoded as UTF-8; empty lines are skipped.
 */
export class LineDecoder {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {}

  /** Feeds bytes; returns the lines they completed, in order. */
  push(data: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = data.indexOf(0x0a, start); nl !== -1; nl = data.indexOf(0x0a, start)) {
      this.append(data.subarray(start, nl));
      const line = this.take();
      const text = line.toString("utf8").replace(/\r$/, "");
      if (text.trim() !== "") lines.push(text);
      start = nl + 1;
    }
    this.append(data.subarray(start));
    return lines;
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.buffered + part.length > this.maxFrameBytes)
      throw new FrameTooLargeError(`an incoming frame exceeds ${this.maxFrameBytes} bytes`);
    this.chunks.push(part);
    this.buffered += part.length;
  }

  private take(): Buffer {
    const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks.length = 0;
    this.buffered = 0;
    return whole;
  }
}

/** One outgoing frame. */
export function encodeFrame(message: unknown): string {
  return JSON.stringify(message) + "\n";
}
