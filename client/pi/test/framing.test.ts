// Newline-delimited framing of incoming bytes: chunk boundaries anywhere, UTF-8 split across
// chunks, and the cap on an unfinished frame.
import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeFrame, FrameTooLargeError, LineDecoder } from "../src/framing.js";

test("lines are cut at \\n whatever the chunking, \\r\\n tolerated, blank lines skipped", () => {
  const decoder = new LineDecoder(1024);
  assert.deepEqual(decoder.push(Buffer.from('{"a":1}\n{"b"')), ['{"a":1}']);
  assert.deepEqual(decoder.push(Buffer.from(":2}\r\n\n")), ['{"b":2}']);
  assert.deepEqual(decoder.push(Buffer.from('{"c":3}')), []);
  assert.deepEqual(decoder.push(Buffer.from("\n")), ['{"c":3}']);
});

test("a UTF-8 character split across two chunks is decoded whole", () => {
  const decoder = new LineDecoder(1024);
  const bytes = Buffer.from(encodeFrame({ text: "汉字 🎉" }));
  const cut = bytes.indexOf(Buffer.from("🎉")) + 2;  // inside the emoji's 4 bytes
  assert.deepEqual(decoder.push(bytes.subarray(0, cut)), []);
  const [line] = decoder.push(bytes.subarray(cut));
  assert.deepEqual(JSON.parse(line ?? "null"), { text: "汉字 🎉" });
});

test("an unfinished frame over the cap is refused instead of buffered", () => {
  const decoder = new LineDecoder(16);
  assert.deepEqual(decoder.push(Buffer.from("0123456789abcdef\n")), ["0123456789abcdef"], "exactly the cap is fine");
  decoder.push(Buffer.from("0123456789"));
  assert.throws(() => decoder.push(Buffer.from("abcdefg")), FrameTooLargeError);
});
